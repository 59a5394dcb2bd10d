import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectionPath, countRules, CRD_CORPUS, objectOf, readCrdKind, withoutCel } from './crd-kinds.mjs';
import { crdScaleKind, scaleMarkdown } from './scale.mjs';

const corpus = (f: string) => join(CRD_CORPUS, f);

describe('CRD-defined kinds for the benchmark', () => {
  it('reads what a CRD serves, in the version its examples are written in', () => {
    const k = readCrdKind(corpus('snapshot.storage.k8s.io_volumesnapshots.yaml'));
    expect([k.group, k.version, k.kind, k.plural, k.namespaced]).toEqual(['snapshot.storage.k8s.io', 'v1', 'VolumeSnapshot', 'volumesnapshots', true]);
    // Three rules on spec.source, one on each of its two fields, one on volumeSnapshotClassName.
    expect(k.celRules).toBe(6);
    expect(k.examples.map((e) => e.metadata.name)).toEqual(['new-snapshot-demo-v1']);
    const gc = readCrdKind(corpus('gateway.networking.k8s.io_gatewayclasses.yaml'));
    expect(gc.namespaced).toBe(false);
    expect(gc.examples).toHaveLength(2);
  });

  it('strips every CEL rule of every version and nothing else, leaving the original as it was', () => {
    const k = readCrdKind(corpus('gateway.networking.k8s.io_gateways.yaml'));
    const before = JSON.stringify(k.crd);
    const plain = withoutCel(k.crd);
    expect(JSON.stringify(k.crd)).toBe(before);
    expect(k.crd.spec.versions.map((v: any) => countRules(v.schema.openAPIV3Schema))).toEqual([16, 16]);
    expect(plain.spec.versions.map((v: any) => countRules(v.schema.openAPIV3Schema))).toEqual([0, 0]);
    // Only the x-kubernetes-validations keys went: removing them from the original text gives the copy.
    const strip = (o: unknown): unknown =>
      Array.isArray(o)
        ? o.map(strip)
        : o && typeof o === 'object'
          ? Object.fromEntries(
              Object.entries(o)
                .filter(([key]) => key !== 'x-kubernetes-validations')
                .map(([key, v]) => [key, strip(v)]),
            )
          : o;
    expect(plain).toEqual(strip(k.crd));
    expect(JSON.stringify(plain)).not.toContain('x-kubernetes-validations');
  });

  it("makes objects from the examples in turn, named and labelled, without the example's namespace", () => {
    const k = readCrdKind(corpus('cert-manager.io_certificates.yaml'));
    const a = objectOf(k, 'c-1', { app: 'bench', bucket: 'b1' }, 0);
    const b = objectOf(k, 'c-2', { app: 'bench' }, 1);
    expect(a.apiVersion).toBe('cert-manager.io/v1');
    expect(a.kind).toBe('Certificate');
    expect(a.metadata).toEqual({ name: 'c-1', labels: { test: 'first', app: 'bench', bucket: 'b1' } });
    expect(b.metadata.labels).toEqual({ test: 'second', app: 'bench' });
    expect(a.spec.issuerRef.name).toBe('selfsigned-issuer');
    // The examples themselves are not changed.
    expect(k.examples[0]?.metadata.namespace).toBe('default');
    const fixed = objectOf(k, 'c-3', {}, 2, (o, i) => (o.spec.secretName = `s-${i}`));
    expect(fixed.spec.secretName).toBe('s-2');
  });

  it('addresses namespaced and cluster-scoped kinds as kube-apiserver serves them', () => {
    const ns = readCrdKind(corpus('keda.sh_scaledobjects.yaml'));
    const cluster = readCrdKind(corpus('gateway.networking.k8s.io_gatewayclasses.yaml'));
    expect(collectionPath(ns, 'n1')).toBe('/apis/keda.sh/v1alpha1/namespaces/n1/scaledobjects');
    expect(collectionPath(ns, '')).toBe('/apis/keda.sh/v1alpha1/scaledobjects');
    expect(collectionPath(cluster, 'n1')).toBe('/apis/gateway.networking.k8s.io/v1/gatewayclasses');
  });
});

describe('scale run of a CRD-defined kind', () => {
  it("stores the CRD's objects, labelled for the selector, under its own paths", () => {
    const kind = crdScaleKind(readCrdKind(join(CRD_CORPUS, 'seeds', 'stable.example.com_crontabs.yaml')));
    expect(kind.all).toBe('/apis/stable.example.com/v1/crontabs');
    expect(kind.collection('scale-07')).toBe('/apis/stable.example.com/v1/namespaces/scale-07/crontabs');
    const o = kind.body(105) as any;
    expect(o.apiVersion).toBe('stable.example.com/v1');
    expect(o.metadata).toEqual({ name: 's-0000105', labels: { app: 'scale', bucket: 'b1' } });
    expect(o.spec).toEqual({ cronSpec: '* * * * */5', image: 'my-awesome-cron-image' });
  });

  it('refuses a cluster-scoped kind, which cannot be spread over namespaces', () => {
    expect(() => crdScaleKind(readCrdKind(corpus('gateway.networking.k8s.io_gatewayclasses.yaml')))).toThrow(/cluster-scoped/);
  });

  it("reports each figure against the issue's target for it", () => {
    const md = scaleMarkdown({
      objects: 1000,
      kind: 'CronTabs',
      date: 'd',
      machine: { cpus: 2, cpuModel: 'x', node: 'v20' },
      loadAverage: { start: [1, 2, 3], end: [4, 5, 6] },
      targets: [{ id: 'ours', label: 'ours' }],
      figures: {
        get: { ours: { value: 4.5 } },
        page: { ours: { value: 51 } },
        'cold-start': { ours: { error: 'gone' } },
        cgroup: { ours: { value: 90, limitMiB: 1536, oomKills: 0 } },
      },
      notes: [],
    });
    expect(md).toContain('# Scale: 1,000 CronTabs in 100 namespaces');
    expect(md).toContain('load average 1/2/3 at the start, 4/5/6 at the end');
    expect(md).toContain('| get p99 | ours | 4.5 ms | under 10 ms: met |');
    expect(md).toContain('| 500-item page of a cluster-wide list, p99 | ours | 51 ms | under 50 ms: **missed** |');
    expect(md).toContain('| cold start to /readyz | ours | failed |  |');
    expect(md).toMatch(/\| ours \| 90 MiB \| no OOM kill, under 1536 MiB: met \|/);
  });
});
