/**
 * @module manifests/deploy-files.test
 * The committed Helm chart and kustomize files (deploy/) are what src/manifests/chart.ts and kustomize.ts generate
 * (`npm run manifests` rewrites them), and they keep the invariants of the install: no APIService skips TLS
 * verification, the chart's version and appVersion, the ha component's choices.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { CHART_DIR, HA_VALUES_FILE, KUSTOMIZE_DIR, deployFiles, packageVersion } from './deploy-files.js';
import { CHART_VERSION } from './chart.js';
import { jsonPatch } from './kustomize.js';

const ROOT = resolve(import.meta.dirname, '../..');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : [relative(ROOT, p)];
  });
}

describe('deploy/ (Helm chart and kustomize)', () => {
  const generated = deployFiles(packageVersion(ROOT));

  it('the committed files equal the generator output, and nothing else is there', () => {
    const committed = [...filesUnder(join(ROOT, CHART_DIR)), HA_VALUES_FILE, ...filesUnder(join(ROOT, KUSTOMIZE_DIR))].sort();
    expect(committed).toEqual(generated.map((f) => f.path).sort());
    for (const f of generated) expect(readFileSync(join(ROOT, f.path), 'utf8'), `${f.path} differs: run npm run manifests`).toBe(f.text);
  });

  it('Chart.yaml: version 0.1.0, appVersion from package.json', () => {
    const chart = parse(generated.find((f) => f.path === `${CHART_DIR}/Chart.yaml`)!.text) as { version: string; appVersion: string; apiVersion: string };
    expect(chart).toMatchObject({ apiVersion: 'v2', version: CHART_VERSION, appVersion: packageVersion(ROOT) });
    expect(CHART_VERSION).toBe('0.1.0');
  });

  it('never skips TLS verification', () => {
    for (const f of generated) expect(f.text, f.path).not.toMatch(/insecureSkipTLSVerify|insecureSkipVerify/);
  });

  it('the kustomize base registers APIServices whose CA cert-manager injects, with no caBundle of their own', () => {
    const tls = generated.find((f) => f.path === `${KUSTOMIZE_DIR}/base/tls.yaml`)!.text;
    const apiServices = parseAllDocuments(tls).map((d) => d.toJS()).filter((o) => o.kind === 'APIService');
    expect(apiServices.length).toBeGreaterThan(0);
    for (const a of apiServices) {
      expect(a.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('website-system/website-apiserver-serving-cert');
      expect(a.spec.caBundle).toBeUndefined();
    }
  });
});

describe('jsonPatch', () => {
  it('adds, removes and replaces, arrays whole, escaping ~ and / in keys', () => {
    expect(jsonPatch({ a: 1, b: { c: [1, 2], 'x/y': 1 }, d: 1 }, { a: 1, b: { c: [1, 3], 'x/y': 2, 'e~': 0 } })).toEqual([
      { op: 'remove', path: '/d' },
      { op: 'replace', path: '/b/c', value: [1, 3] },
      { op: 'replace', path: '/b/x~1y', value: 2 },
      { op: 'add', path: '/b/e~0', value: 0 },
    ]);
  });
});
