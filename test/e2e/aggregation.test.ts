/**
 * The APIService registration itself: available through TLS verified by its caBundle, discovery and OpenAPI
 * served through kube-apiserver.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

describe('registration through an APIService', () => {
  const env = e2e();

  it('is Available=True with a caBundle and TLS verification on', async () => {
    const o = JSON.parse(await kubectlOk(env.kubeconfig.admin, ['get', 'apiservice', 'v1alpha1.extensions.example.com', '-o', 'json']));
    expect(o.spec.insecureSkipTLSVerify ?? false).toBe(false);
    expect(Buffer.from(o.spec.caBundle, 'base64').toString()).toContain('BEGIN CERTIFICATE');
    expect(o.spec.service).toMatchObject({ name: 'website-apiserver', namespace: 'website-system', port: env.website.port });
    const available = o.status.conditions.find((c: { type: string }) => c.type === 'Available');
    expect(available).toMatchObject({ status: 'True', reason: 'Passed' });
  });

  it('kubectl api-resources lists websites', async () => {
    const out = await kubectlOk(env.kubeconfig.admin, ['api-resources', '--api-group=extensions.example.com', '--no-headers']);
    const row = out.split('\n').find((l) => l.startsWith('websites'))?.split(/\s+/);
    expect(row).toEqual(['websites', 'ws', 'extensions.example.com/v1alpha1', 'true', 'Website']);
  });

  it('kubectl v1.37, which asks only for aggregated discovery v2 (no v2beta1 fallback), discovers and lists websites straight from our port', async () => {
    // Our own admin certificate (from our CA: system:masters) to our port, not kube-apiserver; the serving certificate
    // is the rendered one, valid for the Service's DNS name only.
    const ours = join(env.website.certDir, 'port-kubeconfig');
    writeFileSync(ours, YAML.stringify({
      apiVersion: 'v1', kind: 'Config', 'current-context': 'ours',
      clusters: [{ name: 'ours', cluster: { server: env.website.url, 'certificate-authority': env.website.servingCAFile, 'tls-server-name': 'website-apiserver.website-system.svc' } }],
      users: [{ name: 'admin', user: { 'client-certificate': join(env.website.certDir, 'admin.crt'), 'client-key': join(env.website.certDir, 'admin.key') } }],
      contexts: [{ name: 'ours', context: { cluster: 'ours', user: 'admin' } }],
    }), { mode: 0o600 });
    const r = await kubectl(ours, ['get', 'websites', '-A', '-v=8']);
    expect(r.code, r.stderr).toBe(0);
    const accept = /url="https:\/\/[^"]+\/apis\?timeout=[^"]*" headers=<\s*Accept: ([^\n]+)/.exec(r.stderr)?.[1] ?? '';
    expect(accept).toContain('g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(accept).not.toContain('v2beta1');
    expect(r.stderr).toMatch(/"kind\\":\\"APIGroupDiscoveryList\\",\\"apiVersion\\":\\"apidiscovery.k8s.io\/v2\\"/);
    const resources = await kubectlOk(ours, ['api-resources', '--api-group=extensions.example.com', '--no-headers']);
    expect(resources.split(/\s+/).slice(0, 5)).toEqual(['websites', 'ws', 'extensions.example.com/v1alpha1', 'true', 'Website']);
  });

  it('kubectl explain website works from the aggregated OpenAPI', async () => {
    // kube-apiserver fetches our OpenAPI in the background after the APIService turns Available: poll for it.
    const out = await waitFor('the aggregated OpenAPI to include Website', async () => {
      const r = await kubectl(env.kubeconfig.admin, ['explain', 'website']);
      return r.code === 0 && r.stdout;
    }, 60_000, 500);
    expect(out).toContain('KIND:       Website');
    expect(out).toContain('extensions.example.com');
    const spec = await kubectlOk(env.kubeconfig.admin, ['explain', 'website.spec.gitRepo']);
    expect(spec).toContain('gitRepo');
  });
});
