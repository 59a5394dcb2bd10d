import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import type { JSONSchema } from '../../apis/meta/json-schema.js';
import { compileSchemaAdmission } from '../schema.js';
import { compileCelRules } from './index.js';
import { CRD_CORPUS } from '../../../test/helpers/crd-corpus.mjs';

const CRDS = CRD_CORPUS;
const AT = 'spec.validation.openAPIV3Schema';

function crdFiles(): string[] {
  const top = readdirSync(CRDS).filter((f) => f.endsWith('.yaml') && !f.includes('.example.'));
  const seeds = readdirSync(join(CRDS, 'seeds')).filter((f) => f.endsWith('.yaml') && !f.includes('.example.') && !f.includes('as-written'));
  return [...top.map((f) => join(CRDS, f)), ...seeds.map((f) => join(CRDS, 'seeds', f))];
}

describe('corpus CRDs', () => {
  for (const file of crdFiles()) {
    it(`every rule of ${file.split('/').pop()} compiles`, () => {
      const crd = YAML.parse(readFileSync(file, 'utf8'));
      for (const [i, v] of (crd.spec.versions as { schema?: { openAPIV3Schema: JSONSchema } }[]).entries()) {
        if (!v.schema) continue;
        const { errors } = compileCelRules(v.schema.openAPIV3Schema, `spec.versions[${i}].schema.openAPIV3Schema`);
        expect(errors.map((e) => e.message)).toEqual([]);
      }
    });
  }
});

describe('volumesnapshots cel-tests', () => {
  const dir = join(CRDS, 'snapshot.storage.k8s.io_volumesnapshots.cel-tests');
  const crd = YAML.parse(readFileSync(join(CRDS, 'snapshot.storage.k8s.io_volumesnapshots.yaml'), 'utf8'));
  const schema = crd.spec.versions.find((v: { name: string }) => v.name === 'v1').schema.openAPIV3Schema as JSONSchema;
  const { rules, errors } = compileCelRules(schema, AT);
  const load = (f: string) => YAML.parse(readFileSync(join(dir, f), 'utf8'));
  it('compiles', () => {
    expect(errors).toEqual([]);
    expect(rules.ruleCount).toBeGreaterThan(3);
  });
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.yaml') && !x.includes('.pre.') && !x.includes('.post.'))) {
    it(`create ${f}`, () => {
      const msgs = rules.validate(load(f), undefined).errors.map((e) => e.message);
      let want: string | undefined;
      try {
        want = readFileSync(join(dir, `${f}.err`), 'utf8').trim();
      } catch {
        want = undefined;
      }
      if (want) expect(msgs.join('\n')).toContain(want);
      else expect(msgs).toEqual([]);
    });
  }
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.post.yaml'))) {
    it(`update ${f}`, () => {
      const pre = load(f.replace('.post.', '.pre.'));
      const msgs = rules.validate(load(f), pre).errors.map((e) => e.message);
      let want: string | undefined;
      try {
        want = readFileSync(join(dir, `${f}.tx_err`), 'utf8').trim();
      } catch {
        want = undefined;
      }
      // The .tx_err files predate 1.37, which prints the value itself where they print its type; the words after it agree.
      if (want) expect(msgs.join('\n')).toContain(want.replace(/^Invalid value: "string": /, ''));
      else expect(msgs).toEqual([]);
    });
  }
  it('update vs-source-vsc-to-vsc: kube-apiserver 1.37.2 answer, byte for byte', () => {
    const f = 'vs-source-vsc-to-vsc.post.yaml';
    const msgs = rules.validate(load(f), load(f.replace('.post.', '.pre.'))).errors.map((e) => e.message);
    expect(msgs).toEqual(['spec.source.volumeSnapshotContentName: Invalid value: "cluster-example-1-p": volumeSnapshotContentName is immutable']);
  });
});

describe('corpus examples pass their CRD rules once defaulted (kube accepts them)', () => {
  for (const file of crdFiles()) {
    const examples = file.replace(/\.yaml$/, '.example.yaml');
    it(`${examples.split('/').pop()}`, () => {
      let docs: { apiVersion?: string; kind?: string }[];
      try {
        docs = YAML.parseAllDocuments(readFileSync(examples, 'utf8')).map((d) => d.toJSON());
      } catch {
        return;
      }
      const crd = YAML.parse(readFileSync(file, 'utf8'));
      for (const doc of docs.filter(Boolean)) {
        const version = doc.apiVersion?.split('/').pop();
        const v = crd.spec.versions.find((x: { name: string }) => x.name === version);
        if (!v?.schema || doc.kind !== crd.spec.names.kind) continue;
        const { rules } = compileCelRules(v.schema.openAPIV3Schema, AT);
        compileSchemaAdmission(v.schema.openAPIV3Schema).applyDefaults(doc as Record<string, unknown>);
        expect(rules.validate(doc, undefined).errors.map((e) => e.message)).toEqual([]);
      }
    });
  }
});
