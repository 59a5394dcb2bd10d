/**
 * @module manifests/crd-configmaps
 * The CRD files of `--crd` as ConfigMaps the server pod mounts (one directory, passed back to the server as `--crd`),
 * and the checksum that rolls the pods when their content changes. Pure: the files' names and texts in, objects out.
 *
 * Two size limits decide how the files are packed. kube refuses a ConfigMap whose data values exceed 1 MiB together
 * (ValidateConfigMap, `Too long: may not be more than 1048576 bytes`), so no file may be larger. Client-side
 * `kubectl apply` (what the manifests' README runs) copies the whole object into the last-applied-configuration
 * annotation, and kube refuses more than 256 KiB of annotations (`metadata.annotations: Too long: may not be more than
 * 262144 bytes`): files are packed so each ConfigMap stays under that, and a file too large for it gets a ConfigMap
 * of its own that only `kubectl apply --server-side` can apply (both limits checked against kube-apiserver 1.37).
 */
import { createHash } from 'node:crypto';

/** CrdFile is one `--crd` file as the command read it: its base name and its text. */
export interface CrdFile {
  name: string;
  text: string;
}

/** CRD_MOUNT_DIR is where the pod sees the CRD files; the server gets `--crd=<it>` (a directory of manifest files). */
export const CRD_MOUNT_DIR = '/etc/website-apiserver/crds';
/** CRD_CHECKSUM_ANNOTATION on the pod template changes with the files' content, so a new content rolls the pods. */
export const CRD_CHECKSUM_ANNOTATION = 'checksum/crds';
/** CONFIGMAP_DATA_LIMIT is kube's limit on a ConfigMap's data (core.MaxSecretSize): bytes of the values together. */
export const CONFIGMAP_DATA_LIMIT = 1024 * 1024;
/** ANNOTATIONS_LIMIT is kube's limit on an object's annotations, keys and values together (TotalAnnotationSizeLimitB). */
export const ANNOTATIONS_LIMIT = 256 * 1024;
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

// The server's directory scan reads only these (src/kinds/crd/load.ts); a key must end so to be read back.
const MANIFEST = /\.(ya?ml|json)$/;
// IsConfigMapKey: these characters, at most 253, and not '.', '..' or starting with '..' (the kubelet's own names).
const KEY_CHARS = /[^-._a-zA-Z0-9]/g;
const KEY_MAX = 253;

/**
 * CrdConfigMap is one rendered ConfigMap: file keys to texts, in the order the files were given, and whether
 * client-side apply can take it. A text YAML cannot carry to kube byte for byte goes in binaryData (base64).
 */
export interface CrdConfigMap {
  name: string;
  data: Record<string, string>;
  binaryData: Record<string, string>;
  /** serverSideOnly: its last-applied-configuration would be over ANNOTATIONS_LIMIT. */
  serverSideOnly: boolean;
}

/** CrdConfigMapShell builds the object around a ConfigMap's name and content (its size counts toward the limits). */
export type CrdConfigMapShell = (cm: Pick<CrdConfigMap, 'name' | 'data' | 'binaryData'>) => object;

/**
 * crdKeys gives each file a ConfigMap key: its name with characters a key cannot hold replaced by `_`, ending in
 * .yaml/.yml/.json (`.yaml` appended otherwise) so the server's directory scan reads it, made unique with `-2`, `-3`…
 * before the extension when two files share a name (the same base name in two directories).
 */
export function crdKeys(files: readonly CrdFile[]): string[] {
  const taken = new Set<string>();
  return files.map((f) => {
    let base = f.name.replace(KEY_CHARS, '_').replace(/^\.+/, '');
    if (!MANIFEST.test(base)) base = `${base || 'crd'}.yaml`;
    const ext = MANIFEST.exec(base)![0];
    const stem = base.slice(0, -ext.length) || 'crd';
    for (let n = 1; ; n++) {
      const suffix = n === 1 ? '' : `-${n}`;
      const key = `${stem.slice(0, KEY_MAX - suffix.length - ext.length)}${suffix}${ext}`;
      if (!taken.has(key)) {
        taken.add(key);
        return key;
      }
    }
  });
}

// Text kubectl's YAML 1.1 parser reads back as written: tab, newline and printable characters. It folds U+2028 and
// U+2029 into line breaks (seen against kubectl 1.32), and control characters, C1 (NEL), BOM and U+FFFE/U+FFFF are not
// YAML-printable; a carriage return would be kept only in a quoted style. Such a file goes in binaryData.
const YAML_SAFE = /^[\t\n\x20-\x7e\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\u{10000}-\u{10ffff}]*$/u;

/** yamlSafe says whether a text can go in a ConfigMap's data (else binaryData) and reach the pod unchanged. */
export function yamlSafe(text: string): boolean {
  return YAML_SAFE.test(text);
}

/**
 * packCrdConfigMaps packs the files into ConfigMaps named `<prefix>`, `<prefix>-2`…. A file too large for client-side
 * apply gets a ConfigMap of its own; the others fill ConfigMaps in order while client-side apply can still take them
 * (the order of keys does not matter: the server reads them in name order). Throws when a file is over kube's 1 MiB
 * ConfigMap limit.
 */
export function packCrdConfigMaps(prefix: string, files: readonly CrdFile[], shell: CrdConfigMapShell): CrdConfigMap[] {
  const keys = crdKeys(files);
  const out: CrdConfigMap[] = [];
  // The ConfigMap small files are going into; once full, a new one is started after whatever came meanwhile.
  let open: CrdConfigMap | undefined;
  files.forEach((f, i) => {
    const size = Buffer.byteLength(f.text, 'utf8');
    if (size > CONFIGMAP_DATA_LIMIT) {
      throw new Error(
        `--crd ${f.name}: ${size} bytes, over the ${CONFIGMAP_DATA_LIMIT} bytes (1 MiB) kube allows in a ConfigMap's data; split the file (several CRDs can be several files)`,
      );
    }
    const key = keys[i]!;
    const add = (cm: Pick<CrdConfigMap, 'name' | 'data' | 'binaryData'>) =>
      yamlSafe(f.text)
        ? { ...cm, data: { ...cm.data, [key]: f.text } }
        : { ...cm, binaryData: { ...cm.binaryData, [key]: Buffer.from(f.text, 'utf8').toString('base64') } };
    if (open !== undefined) {
      const grown = add(open);
      if (fitsClientSideApply(shell(grown))) {
        Object.assign(open, grown);
        return;
      }
    }
    const cm = add({ name: out.length === 0 ? prefix : `${prefix}-${out.length + 1}`, data: {}, binaryData: {} });
    const alone = fitsClientSideApply(shell(cm));
    out.push({ ...cm, serverSideOnly: !alone });
    // A file alone in its ConfigMap leaves the small files' one open.
    if (alone) open = out.at(-1);
  });
  return out;
}

/** crdChecksum is the sha256 (hex) of the keys and texts in order: any change of content, name or order changes it. */
export function crdChecksum(files: readonly CrdFile[]): string {
  const h = createHash('sha256');
  crdKeys(files).forEach((k, i) => {
    h.update(`${k}\0${Buffer.byteLength(files[i]!.text, 'utf8')}\0`).update(files[i]!.text, 'utf8');
  });
  return h.digest('hex');
}

/**
 * fitsClientSideApply: the annotation client-side `kubectl apply` adds stays within kube's annotation limit. Its value
 * is the object (as Go's encoding/json writes it, with the now empty `annotations: {}`, then a newline); the object's
 * other annotations count too. Checked byte for byte against kube-apiserver 1.37 with kubectl 1.32.
 */
export function fitsClientSideApply(object: object): boolean {
  const o = object as { metadata?: { annotations?: Record<string, string> } };
  const others = Object.entries(o.metadata?.annotations ?? {}).filter(([k]) => k !== LAST_APPLIED);
  const value = { ...o, metadata: { ...o.metadata, annotations: Object.fromEntries(others) } };
  const total = others.reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  return total + LAST_APPLIED.length + goJsonLength(value) + 1 <= ANNOTATIONS_LIMIT;
}

// goJsonLength is the byte length of Go's json.Marshal of a JSON value: JavaScript's JSON.stringify but for the
// escapes Go adds, HTML-safe <, > and & (\u003c…) and U+2028/U+2029. (Other control characters, written alike since
// Go 1.22, never reach data: yamlSafe sends such texts to binaryData.)
function goJsonLength(value: unknown): number {
  const s = JSON.stringify(value);
  let extra = 0;
  for (const ch of s) {
    if (ch === '<' || ch === '>' || ch === '&')
      extra += 5; // 1 byte → 6
    else if (ch === '\u2028' || ch === '\u2029') extra += 3; // 3 bytes → 6
  }
  return Buffer.byteLength(s, 'utf8') + extra;
}
