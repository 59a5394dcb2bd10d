/**
 * @module discovery/discovery
 * Pure builders for the discovery documents (legacy APIGroupList/APIGroup/APIResourceList, aggregated
 * discovery apidiscovery.k8s.io/v2, `/version`), computed from the registered ResourceDefinitions.
 * Shapes follow k8s.io/apimachinery meta/v1 types and k8s.io/api apidiscovery/v2; see API-CONVENTIONS §1.1–1.2, §1.4.
 */
import { createHash } from 'node:crypto';
import type { ResourceDefinition } from '../registry/resource.js';
import { buildInfo } from '../util/build-info.js';

/** GroupVersionKind names one kind, as in discovery `responseKind` and OpenAPI `x-kubernetes-group-version-kind`. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** GroupVersionForDiscovery mirrors metav1.GroupVersionForDiscovery. */
export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

/** APIGroupBody is an APIGroup as it appears inside an APIGroupList (no TypeMeta). */
export interface APIGroupBody {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

/** APIGroup mirrors metav1.APIGroup, an unversioned type (`apiVersion: v1`). */
export interface APIGroup extends APIGroupBody {
  kind: 'APIGroup';
  apiVersion: 'v1';
}

/** APIGroupList mirrors metav1.APIGroupList. */
export interface APIGroupList {
  kind: 'APIGroupList';
  apiVersion: 'v1';
  groups: APIGroupBody[];
}

/** APIResource mirrors metav1.APIResource (field order as the apiserver writes it). */
export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

/** APIResourceList mirrors metav1.APIResourceList. */
export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

/** APISubresourceDiscovery mirrors apidiscovery/v2 APISubresourceDiscovery. */
export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: string[];
}

/** APIResourceDiscovery mirrors apidiscovery/v2 APIResourceDiscovery (no storageVersionHash in v2). */
export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

/** APIVersionDiscovery mirrors apidiscovery/v2 APIVersionDiscovery. */
export interface APIVersionDiscovery {
  version: string;
  resources: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

/** APIGroupDiscovery mirrors apidiscovery/v2 APIGroupDiscovery. */
export interface APIGroupDiscovery {
  metadata: { name: string };
  versions: APIVersionDiscovery[];
}

/** APIGroupDiscoveryList mirrors apidiscovery/v2 APIGroupDiscoveryList. */
export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: 'apidiscovery.k8s.io/v2';
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

/** VersionInfo mirrors k8s.io/apimachinery/pkg/version.Info. */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

/** DISCOVERY_V2_CONTENT_TYPE is the media type of an aggregated discovery v2 response (the apiserver echoes the GVK). */
export const DISCOVERY_V2_CONTENT_TYPE = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';

/** RESOURCE_VERBS are the verbs of a top-level resource, sorted as the apiserver sorts them. */
export const RESOURCE_VERBS: readonly string[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/**
 * CRD_RESOURCE_VERBS are the verbs of a CRD-defined resource, in the order kube-apiserver's apiextensions discovery
 * controller lists them (it writes the list out by hand; the generic installer behind RESOURCE_VERBS sorts its own).
 */
export const CRD_RESOURCE_VERBS: readonly string[] = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

/**
 * isCustomResource: the kind comes from a CustomResourceDefinition, so its discovery entries and OpenAPI are shaped as
 * apiextensions-apiserver shapes them rather than as the generic installer does.
 */
export const isCustomResource = (def: ResourceDefinition): boolean => def.customResource === true;

const resourceVerbs = (def: ResourceDefinition) => [...(isCustomResource(def) ? CRD_RESOURCE_VERBS : RESOURCE_VERBS)];

/** SUBRESOURCE_VERBS are the verbs of the status and scale subresources. */
export const SUBRESOURCE_VERBS: readonly string[] = ['get', 'patch', 'update'];

/** SCALE_GVK is the kind the scale subresource speaks (client-go's scale client reads group/version from discovery). */
export const SCALE_GVK: Readonly<GroupVersionKind> = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** GroupVersionKinds is one served group/version and the kinds in it, in registration order. */
export interface GroupVersionKinds {
  group: string;
  version: string;
  kinds: readonly ResourceDefinition[];
}

// kubeVersion parses v<major>[(alpha|beta)<minor>] (k8s.io/apimachinery/pkg/version/helpers.go); others rank last.
function kubeVersion(v: string): { rank: number; major: number; minor: number } | undefined {
  const m = /^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$/.exec(v);
  if (!m) return undefined;
  return { rank: m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, major: Number(m[1]), minor: Number(m[3] ?? 0) };
}

/**
 * compareKubeVersions orders versions as CompareKubeAwareVersionStrings does, most preferred first: GA before beta
 * before alpha, higher numbers first, then anything else by name (v1 < v10 < v11beta2 < v10beta3 < v3beta1 <
 * v12alpha1 < v11alpha2 < foo1 < foo10, in that function's own words).
 */
export function compareKubeVersions(a: string, b: string): number {
  const x = kubeVersion(a);
  const y = kubeVersion(b);
  if (x && y) return y.rank - x.rank || y.major - x.major || y.minor - x.minor;
  if (x) return -1;
  if (y) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * groupVersions lists every served group/version: groups in first-registration order, each group's versions by
 * kube's version priority (the first is the group's preferred version, as for a CRD's versions).
 */
export function groupVersions(kinds: readonly ResourceDefinition[]): GroupVersionKinds[] {
  const out: { group: string; version: string; kinds: ResourceDefinition[] }[] = [];
  for (const def of kinds) {
    const gv = out.find((x) => x.group === def.group && x.version === def.version);
    if (gv) gv.kinds.push(def);
    else out.push({ group: def.group, version: def.version, kinds: [def] });
  }
  const groups = [...new Set(out.map((gv) => gv.group))];
  return groups.flatMap((g) => out.filter((gv) => gv.group === g).sort((a, b) => compareKubeVersions(a.version, b.version)));
}

/** storageVersionHash is base64std(sha256("group/version/kind")[:8]), as apiserver discovery/storageversionhash.go computes it. */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

function groupBody(kinds: readonly ResourceDefinition[], group: string): APIGroupBody | undefined {
  const versions = groupVersions(kinds)
    .filter((gv) => gv.group === group)
    .map((gv) => ({ groupVersion: `${gv.group}/${gv.version}`, version: gv.version }));
  const preferred = versions[0];
  if (!preferred) return undefined;
  return { name: group, versions, preferredVersion: { ...preferred } };
}

/** apiGroupList builds the legacy `GET /apis` answer. */
export function apiGroupList(kinds: readonly ResourceDefinition[]): APIGroupList {
  const groups: APIGroupBody[] = [];
  for (const name of new Set(kinds.map((k) => k.group))) {
    const body = groupBody(kinds, name);
    if (body) groups.push(body);
  }
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
}

/** apiGroup builds `GET /apis/<group>`; undefined when the group is not served. */
export function apiGroup(kinds: readonly ResourceDefinition[], group: string): APIGroup | undefined {
  const body = groupBody(kinds, group);
  return body && { kind: 'APIGroup', apiVersion: 'v1', ...body };
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/** apiResourceList builds `GET /apis/<group>/<version>`; undefined when the group/version is not served. */
export function apiResourceList(kinds: readonly ResourceDefinition[], group: string, version: string): APIResourceList | undefined {
  const defs = kinds.filter((k) => k.group === group && k.version === version);
  if (defs.length === 0) return undefined;
  // Each kind's entries as one block, the kind's own resource first.
  const blocks: { name: string; entries: APIResource[] }[] = [];
  for (const def of defs) {
    const resources: APIResource[] = [];
    const main: APIResource = {
      name: def.plural,
      singularName: def.singular,
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: resourceVerbs(def),
    };
    // shortNames/categories are omitempty in metav1.APIResource.
    if (def.shortNames.length) main.shortNames = [...def.shortNames];
    if (def.categories.length) main.categories = [...def.categories];
    // The hash names the version objects are stored in, the same from every served version.
    main.storageVersionHash = storageVersionHash(def.group, def.storageVersion ?? def.version, def.kind);
    resources.push(main);
    // Subresources share the parent's scope (the installer rejects a mismatch) and have no singular name.
    if (def.subresources.status) {
      resources.push({ name: `${def.plural}/status`, singularName: '', namespaced: def.namespaced, kind: def.kind, verbs: [...SUBRESOURCE_VERBS] });
    }
    if (def.subresources.scale) {
      resources.push({
        name: `${def.plural}/scale`,
        singularName: '',
        namespaced: def.namespaced,
        group: SCALE_GVK.group,
        version: SCALE_GVK.version,
        kind: SCALE_GVK.kind,
        verbs: [...SUBRESOURCE_VERBS],
      });
    }
    blocks.push({ name: def.plural, entries: resources });
  }
  // The generic installer registers paths in sorted order (scale before status); the apiextensions discovery
  // controller appends a CRD's status, then its scale, after the resource itself.
  const resources = blocks.sort(byName).flatMap((b) => b.entries);
  if (!defs.some(isCustomResource)) resources.sort(byName);
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}

function resourceDiscovery(def: ResourceDefinition): APIResourceDiscovery {
  const self: GroupVersionKind = { group: def.group, version: def.version, kind: def.kind };
  const out: APIResourceDiscovery = {
    resource: def.plural,
    responseKind: self,
    scope: def.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: def.singular,
    verbs: resourceVerbs(def),
  };
  if (def.shortNames.length) out.shortNames = [...def.shortNames];
  if (def.categories.length) out.categories = [...def.categories];
  // responseKind is always set: client-go drops (sub)resources whose responseKind is missing or empty.
  const subs: APISubresourceDiscovery[] = [];
  if (def.subresources.scale) subs.push({ subresource: 'scale', responseKind: { ...SCALE_GVK }, verbs: [...SUBRESOURCE_VERBS] });
  if (def.subresources.status) subs.push({ subresource: 'status', responseKind: { ...self }, verbs: [...SUBRESOURCE_VERBS] });
  // The apiextensions discovery controller lists a CRD's status before its scale.
  if (isCustomResource(def)) subs.reverse();
  if (subs.length) out.subresources = subs;
  return out;
}

/** aggregatedDiscovery builds the apidiscovery.k8s.io/v2 APIGroupDiscoveryList for `GET /apis` (API-CONVENTIONS §1.2). */
export function aggregatedDiscovery(kinds: readonly ResourceDefinition[]): APIGroupDiscoveryList {
  const items: APIGroupDiscovery[] = [];
  for (const gv of groupVersions(kinds)) {
    let item = items.find((i) => i.metadata.name === gv.group);
    if (!item) {
      item = { metadata: { name: gv.group }, versions: [] };
      items.push(item);
    }
    const resources = gv.kinds.map(resourceDiscovery).sort((a, b) => byName({ name: a.resource }, { name: b.resource }));
    item.versions.push({ version: gv.version, resources, freshness: 'Current' });
  }
  return { kind: 'APIGroupDiscoveryList', apiVersion: 'apidiscovery.k8s.io/v2', metadata: {}, items };
}

/** KUBE_MAJOR and KUBE_MINOR are the Kubernetes API level this server implements (reported by `/version`). */
export const KUBE_MAJOR = '1';
/** KUBE_MINOR: see KUBE_MAJOR. */
export const KUBE_MINOR = '35';

// Read once: /version and every OpenAPI document carry them (util/build-info: package.json and the git checkout).
const BUILD = buildInfo();

// Go's GOARCH spelling, which clients expect in `platform`.
const GOARCH: Record<string, string> = { x64: 'amd64', arm64: 'arm64', arm: 'arm', ia32: '386', ppc64: 'ppc64le', s390x: 's390x' };

/**
 * versionInfo builds the `/version` answer in kube's version.Info shape; gitVersion is a valid semver so clients that
 * parse it succeed, and gitCommit is the checkout's commit when the server runs from one ('' otherwise).
 */
export function versionInfo(): VersionInfo {
  return {
    major: KUBE_MAJOR,
    minor: KUBE_MINOR,
    gitVersion: `v${KUBE_MAJOR}.${KUBE_MINOR}.0-website-apiserver.${BUILD.version}`,
    gitCommit: BUILD.gitCommit,
    gitTreeState: '',
    buildDate: '',
    goVersion: '',
    compiler: 'node',
    platform: `${process.platform}/${GOARCH[process.arch] ?? process.arch}`,
  };
}

/** SerializedDocument is a document serialized once at startup, with its sha512 hash and quoted ETag. */
export interface SerializedDocument {
  /** The JSON text. */
  json: string;
  /** The same text as UTF-8 bytes (sent as-is, so fastify neither re-serializes nor rewrites Content-Type). */
  body: Buffer;
  /** Uppercase hex sha512 of `json` (kube-openapi and aggregated discovery use `%X`). */
  hash: string;
  /** `"<hash>"`: ETags are quoted (strconv.Quote in the apiserver). */
  etag: string;
}

/** serializeDocument serializes a document once and computes its hash the way kube-openapi does (sha512, `%X`). */
export function serializeDocument(doc: unknown): SerializedDocument {
  const json = JSON.stringify(doc);
  const hash = createHash('sha512').update(json).digest('hex').toUpperCase();
  return { json, body: Buffer.from(json, 'utf8'), hash, etag: `"${hash}"` };
}
