import { describe, expect, it } from 'vitest';
import { websiteDefinition, type Website } from '../kinds/website/v1alpha1.js';
import { toTable } from '../registry/table.js';
import { TableRows } from './table-rows.js';

const def = websiteDefinition;
const site = (name: string, rv: string, extra: Partial<Website['spec']> = {}, status?: Website['status']): Website => ({
  apiVersion: 'extensions.example.com/v1alpha1',
  kind: 'Website',
  metadata: {
    name,
    namespace: 'ns',
    uid: `uid-${name}`,
    resourceVersion: rv,
    creationTimestamp: '2020-01-02T03:04:05Z',
    labels: { app: 'x' },
    annotations: { note: 'quotes " and \\ and é and \u0000' },
  },
  spec: { gitRepo: `https://example.com/${name}.git`, replicas: 2, syncIntervalSeconds: 60, serviceType: 'NodePort', ...extra },
  ...(status ? { status } : {}),
});
const text = (o: Website) => Buffer.from(JSON.stringify(o));
const meta = { resourceVersion: '42' };

describe('TableRows', () => {
  const objects = [
    site('a', '7'),
    site('b', '8', { branch: 'main' }, { readyReplicas: 2, nodePort: 30080, deployment: 'b-website', conditions: [{ type: 'Ready', status: 'True' }] }),
    site('c', '9', { serviceType: 'ClusterIP' }),
  ];

  it('renders exactly what toTable renders, for every includeObject and Table version', () => {
    const rows = new TableRows(def);
    for (const version of ['v1', 'v1beta1']) {
      for (const includeObject of ['None', 'Metadata', 'Object'] as const) {
        const now = Date.now();
        const got = rows.table(objects.map(text), meta, { version, includeObject }, now).toString('utf8');
        const want = JSON.stringify(toTable(def, objects, meta, { version, includeObject }));
        expect(got).toBe(want);
      }
    }
    expect(JSON.parse(rows.table([], meta, { version: 'v1', includeObject: 'Metadata' }).toString()).rows).toEqual([]);
  });

  it('reuses a row while the stored bytes are the same, and builds a new one for a new version', () => {
    const rows = new TableRows(def);
    const opts = { version: 'v1', includeObject: 'Metadata' as const };
    rows.table(objects.map(text), meta, opts);
    expect(rows.size).toBe(3);
    rows.table(objects.map(text), meta, opts);
    expect(rows.size).toBe(3);
    const changed = site('a', '10', { replicas: 5 });
    const table = JSON.parse(rows.table([text(changed), ...objects.slice(1).map(text)], meta, opts).toString());
    expect(rows.size).toBe(4);
    expect(table.rows[0].cells[2]).toBe('0/5');
    expect(table.rows[0].object.metadata.resourceVersion).toBe('10');
  });

  it('computes AGE at each request, not when the row was first built', () => {
    const rows = new TableRows(def);
    const opts = { version: 'v1', includeObject: 'None' as const };
    const fresh = { ...site('d', '11'), metadata: { ...site('d', '11').metadata, creationTimestamp: '2026-01-01T00:00:00Z' } };
    const t0 = Date.parse('2026-01-01T00:00:30Z');
    const ageAt = (now: number) => JSON.parse(rows.table([text(fresh)], meta, opts, now).toString()).rows[0].cells[6];
    expect(ageAt(t0)).toBe('30s');
    expect(ageAt(t0 + 3_600_000)).toBe('60m');
    expect(rows.size).toBe(1);
  });
});
