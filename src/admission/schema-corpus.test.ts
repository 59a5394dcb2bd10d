/**
 * The schema-admission differential: every body test/fixtures/schema-admission/record.mjs sent to a real
 * kube-apiserver 1.37 (the CRD corpus in ../shared/crds, CEL rules stripped, plus the synthetic CRD beside the
 * recordings), answered by compileSchemaAdmission as the server's decode and validation would use it, must get kube's
 * answer: the same status (201, 400 from the decoder, 422), the same unknown-field warnings, the same created object
 * (defaults applied, unknown fields pruned) and the same 422 causes (field, reason, message), in the same order for
 * each field. Their order across fields is not compared: kube walks an object's properties in Go map order, so that
 * order changes from one request to the next.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { JSONSchema } from '../apis/meta/json-schema.js';
import { CoercionError, compileSchemaAdmission } from './schema.js';
import { CRD_CORPUS } from '../../test/helpers/crd-corpus.mjs';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const fixtures = join(repo, 'test', 'fixtures', 'schema-admission');
const shared = CRD_CORPUS;

interface Cause {
  field: string;
  reason: string;
  message: string;
}
interface Recorded {
  name: string;
  /**
   * 'status': a dry-run PUT of the body to the status subresource of a stored object; 'update': a dry-run PUT of the
   * body over `old` (stored under a loosened schema: ratcheting); otherwise a dry-run create.
   */
  subresource?: string;
  old?: Record<string, unknown>;
  body: Record<string, unknown>;
  code: number;
  warnings: string[];
  object?: Record<string, unknown>;
  causes?: Cause[];
  status?: { message?: string };
}
interface Fixture {
  crd: string;
  versions: { name: string; cases: Recorded[] }[];
}
interface Subresources {
  status?: object;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}
interface CrdVersion {
  name: string;
  storage?: boolean;
  schema?: { openAPIV3Schema?: JSONSchema };
  subresources?: Subresources;
}
interface Crd {
  spec: { group: string; names: { kind: string }; versions: CrdVersion[] };
}

function crdFile(name: string): string | undefined {
  return [join(shared, name), join(shared, 'seeds', name), join(fixtures, name)].find((p) => existsSync(p));
}

// answer is what the server would answer for one body: decode (prune, coerce), then default and validate.
type Admission = ReturnType<typeof compileSchemaAdmission>;

// The registry's own part is played here as kube's plays it: a create drops the status when the status subresource
// is on (PrepareForCreate), and the created object is the one read back from its storage version (decoded with the
// storage version's schema: pruned and defaulted) and converted to the request's version (pruned again).
function answer(
  kind: string,
  version: string,
  admission: Admission,
  body: Record<string, unknown>,
  status: boolean,
  dropStatus: boolean,
  storage: { version: string; admission: Admission; apiVersion: string },
  old?: Record<string, unknown>,
) {
  const obj = structuredClone(body);
  let unknown: string[];
  try {
    unknown = admission.pruneUnknown(obj);
  } catch (e) {
    if (!(e instanceof CoercionError)) throw e;
    return { code: 400, message: `${kind} in version "${version}" cannot be handled as a ${kind}: ${e.message}` };
  }
  const warnings = unknown.map((f) => `unknown field "${f}"`);
  if (dropStatus) delete obj['status'];
  const errs = old
    ? admission.defaultAndValidateUpdate(obj, structuredClone(old))
    : status
      ? admission.defaultAndValidateStatus(obj)
      : admission.defaultAndValidate(obj);
  if (errs.length > 0) {
    const causes = errs.map((e) => ({ field: e.field, reason: e.type, message: e.message.slice(e.field.length + 2) }));
    return { code: 422, warnings, causes };
  }
  if (storage.version !== version) {
    const apiVersion = obj['apiVersion'];
    obj['apiVersion'] = storage.apiVersion;
    storage.admission.pruneUnknown(obj);
    storage.admission.applyDefaults(obj);
    obj['apiVersion'] = apiVersion;
    admission.pruneUnknown(obj);
  }
  const { metadata: _m, ...rest } = obj;
  return { code: 201, warnings, object: rest };
}

// sortCauses groups causes by field, keeping their order within a field (kube's order at one node is fixed: type,
// composition, string, format, number, array, enum, object); the field-less `<nil>` causes come from anywhere, so
// they are sorted.
function sortCauses(causes: Cause[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of causes) (out[c.field] ??= []).push(`${c.reason} ${c.message}`);
  out['<nil>']?.sort();
  return out;
}

const files = existsSync(fixtures)
  ? readdirSync(fixtures)
      .filter((f) => f.endsWith('.json'))
      .sort()
  : [];

describe('schema admission answers as kube-apiserver 1.37 did (recorded)', () => {
  it('has recordings for the whole corpus', () => {
    expect(files.length).toBeGreaterThanOrEqual(15);
  });

  for (const file of files) {
    const fixture = JSON.parse(readFileSync(join(fixtures, file), 'utf8')) as Fixture;
    const path = crdFile(fixture.crd);
    for (const v of fixture.versions) {
      it.skipIf(!path)(`${fixture.crd} ${v.name}: ${v.cases.length} bodies`, () => {
        const crd = parse(readFileSync(path!, 'utf8')) as Crd;
        const version = crd.spec.versions.find((x) => x.name === v.name);
        const schema = version?.schema?.openAPIV3Schema;
        const sub = version?.subresources ?? {};
        // The scale subresource's checks (ValidateScaleSpec/Status) are the strategy's, not schema admission's.
        const scalePaths = sub.scale ? [sub.scale.specReplicasPath, sub.scale.statusReplicasPath, sub.scale.labelSelectorPath] : [];
        const ownCauses = (causes: Cause[]) => causes.filter((x) => !scalePaths.includes(x.field));
        expect(schema).toBeDefined();
        const admission = compileSchemaAdmission(schema!);
        const stored = crd.spec.versions.find((x) => x.storage)!;
        const storage = {
          version: stored.name,
          admission: compileSchemaAdmission(stored.schema!.openAPIV3Schema!),
          apiVersion: `${crd.spec.group}/${stored.name}`,
        };
        const kind = crd.spec.names.kind;
        const mismatches: unknown[] = [];
        for (const c of v.cases) {
          const status = c.subresource === 'status';
          const ours = answer(kind, v.name, admission, c.body, status, !!sub.status && !status && !c.old, storage, c.old);
          const kubeCauses = ownCauses(c.causes ?? []);
          // A deprecated version's warning is discovery's business.
          c.warnings = c.warnings.filter((w) => w.startsWith('unknown field'));
          const kube =
            c.code === 400
              ? { code: 400, message: c.status?.message }
              : c.code === 422 && kubeCauses.length > 0
                ? { code: 422, warnings: c.warnings, causes: sortCauses(kubeCauses) }
                : c.code === 422
                  ? { code: 201, warnings: c.warnings }
                  : { code: c.code, warnings: c.warnings, object: c.object };
          const { object: _o, ...bare } = ours;
          const mine = ours.code === 422 ? { ...ours, causes: sortCauses(ours.causes ?? []) } : c.code === 422 ? bare : ours;
          try {
            expect(mine).toEqual(kube);
          } catch {
            mismatches.push({ case: c.name, kube, ours: mine });
          }
        }
        // SCHEMA_CORPUS_DUMP=<dir> writes the mismatches there, one file per CRD version, for study.
        const dump = process.env['SCHEMA_CORPUS_DUMP'];
        if (dump && mismatches.length > 0) writeFileSync(join(dump, `${fixture.crd}-${v.name}.json`), JSON.stringify(mismatches, null, 1));
        expect(mismatches).toEqual([]);
      });
    }
  }
});
