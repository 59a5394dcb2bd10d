/**
 * The APIService registration itself: available through TLS verified by its caBundle, discovery and OpenAPI
 * served through kube-apiserver.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { APISERVICE_NAMES } from '../../src/manifests/render.js';
import { kubectl, kubectlOk, waitFor } from './harness/kubectl.js';
import { e2e } from './harness/state.js';

describe('registration through an APIService', () => {
  const env = e2e();

  it('registers both versions, v1 and v1alpha1, each Available=True with a caBundle and TLS verification on', async () => {
    expect(APISERVICE_NAMES).toEqual(['v1.extensions.example.com', 'v1alpha1.extensions.example.com']);
    for (const name of APISERVICE_NAMES) {
      const o = JSON.parse(await kubectlOk(env.kubeconfig.admin, ['get', 'apiservice', name, '-o', 'json']));
      expect(o.spec.insecureSkipTLSVerify ?? false, name).toBe(false);
      expect(Buffer.from(o.spec.caBundle, 'base64').toString()).toContain('BEGIN CERTIFICATE');
      expect(o.spec.service).toMatchObject({ name: 'website-apiserver', namespace: 'website-system', port: env.website.port });
      const available = o.status.conditions.find((c: { type: string }) => c.type === 'Available');
      expect(available, name).toMatchObject({ status: 'True', reason: 'Passed' });
    }
    // kube-apiserver's own discovery prefers v1 (the higher versionPriority) and lists both.
    const group = JSON.parse(await kubectlOk(env.kubeconfig.admin, ['get', '--raw', '/apis/extensions.example.com']));
    expect(group.preferredVersion.version).toBe('v1');
    expect(group.versions.map((v: { version: string }) => v.version)).toEqual(['v1', 'v1alpha1']);
  });

  it('serves the same objects in both versions through kube-apiserver: written in one, read, listed and watched in the other', async () => {
    const admin = env.kubeconfig.admin;
    const ns = 'e2e-versions';
    await kubectl(admin, ['create', 'namespace', ns]);
    const alpha = {
      apiVersion: 'extensions.example.com/v1alpha1',
      kind: 'Website',
      metadata: { name: 'alpha', namespace: ns, annotations: { 'extensions.example.com/node-port': '30111' } },
      spec: { gitRepo: 'https://github.com/luksa/kubia-website-example.git', branch: 'main' },
    };
    expect(await kubectlOk(admin, ['create', '-f', '-'], { input: JSON.stringify(alpha) })).toContain('created');
    const v1 = JSON.parse(await kubectlOk(admin, ['get', '--raw', `/apis/extensions.example.com/v1/namespaces/${ns}/websites/alpha`]));
    expect(v1.apiVersion).toBe('extensions.example.com/v1');
    expect(v1.spec).toEqual({
      replicas: 1,
      git: { repository: alpha.spec.gitRepo, branch: 'main', syncIntervalSeconds: 60 },
      service: { type: 'NodePort', nodePort: 30111 },
    });
    // A write in v1 shows in v1alpha1, and a watch there from the v1 object's resourceVersion sees it converted.
    const watch = kubectl(admin, [
      'get',
      '--raw',
      `/apis/extensions.example.com/v1alpha1/namespaces/${ns}/websites?watch=1&resourceVersion=${v1.metadata.resourceVersion}&timeoutSeconds=5`,
    ]);
    await kubectlOk(admin, [
      'patch',
      'websites.v1.extensions.example.com',
      'alpha',
      '-n',
      ns,
      '--type',
      'merge',
      '-p',
      '{"spec":{"git":{"branch":"gh-pages"}}}',
    ]);
    const events = (await watch).stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e: any) => [e.type, e.object.apiVersion, e.object.spec.branch])).toEqual([['MODIFIED', 'extensions.example.com/v1alpha1', 'gh-pages']]);
    const list = JSON.parse(await kubectlOk(admin, ['get', 'websites.v1alpha1.extensions.example.com', '-n', ns, '-o', 'json']));
    expect(list.items.map((i: any) => [i.metadata.name, i.spec.gitRepo, i.metadata.annotations['extensions.example.com/node-port']])).toEqual([
      ['alpha', alpha.spec.gitRepo, '30111'],
    ]);
  });

  it('kubectl api-resources lists websites', async () => {
    const out = await kubectlOk(env.kubeconfig.admin, ['api-resources', '--api-group=extensions.example.com', '--no-headers']);
    const row = out
      .split('\n')
      .find((l) => l.startsWith('websites'))
      ?.split(/\s+/);
    expect(row).toEqual(['websites', 'ws', 'extensions.example.com/v1', 'true', 'Website']);
  });

  it('kubectl v1.37, which asks only for aggregated discovery v2 (no v2beta1 fallback), discovers and lists websites straight from our port', async () => {
    // Our own admin certificate (from our CA: system:masters) to our port, not kube-apiserver; the serving certificate
    // is the rendered one, valid for the Service's DNS name only.
    const ours = join(env.website.certDir, 'port-kubeconfig');
    writeFileSync(
      ours,
      YAML.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        'current-context': 'ours',
        clusters: [
          {
            name: 'ours',
            cluster: { server: env.website.url, 'certificate-authority': env.website.servingCAFile, 'tls-server-name': 'website-apiserver.website-system.svc' },
          },
        ],
        users: [
          { name: 'admin', user: { 'client-certificate': join(env.website.certDir, 'admin.crt'), 'client-key': join(env.website.certDir, 'admin.key') } },
        ],
        contexts: [{ name: 'ours', context: { cluster: 'ours', user: 'admin' } }],
      }),
      { mode: 0o600 },
    );
    const r = await kubectl(ours, ['get', 'websites', '-A', '-v=8']);
    expect(r.code, r.stderr).toBe(0);
    const accept = /url="https:\/\/[^"]+\/apis\?timeout=[^"]*" headers=<\s*Accept: ([^\n]+)/.exec(r.stderr)?.[1] ?? '';
    expect(accept).toContain('g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    expect(accept).not.toContain('v2beta1');
    expect(r.stderr).toMatch(/"kind\\":\\"APIGroupDiscoveryList\\",\\"apiVersion\\":\\"apidiscovery.k8s.io\/v2\\"/);
    const resources = await kubectlOk(ours, ['api-resources', '--api-group=extensions.example.com', '--no-headers']);
    expect(resources.split(/\s+/).slice(0, 5)).toEqual(['websites', 'ws', 'extensions.example.com/v1', 'true', 'Website']);
  });

  it('kubectl explain website works from the aggregated OpenAPI', async () => {
    // kube-apiserver fetches our OpenAPI in the background after the APIService turns Available: poll for it.
    const out = await waitFor(
      'the aggregated OpenAPI to include Website',
      async () => {
        const r = await kubectl(env.kubeconfig.admin, ['explain', 'website']);
        return r.code === 0 && r.stdout;
      },
      60_000,
      500,
    );
    expect(out).toContain('KIND:       Website');
    expect(out).toContain('extensions.example.com');
    const spec = await kubectlOk(env.kubeconfig.admin, ['explain', 'website.spec.git.repository']);
    expect(spec).toMatch(/VERSION:\s+v1\n/);
    expect(spec).toContain('Repository is the URL of the git repository');
    const alpha = await waitFor(
      'the aggregated OpenAPI to include Website v1alpha1',
      async () => {
        const r = await kubectl(env.kubeconfig.admin, ['explain', 'website.spec.gitRepo', '--api-version=extensions.example.com/v1alpha1']);
        return r.code === 0 && r.stdout;
      },
      60_000,
      500,
    );
    expect(alpha).toMatch(/VERSION:\s+v1alpha1/);
    expect(alpha).toContain('GitRepo is the URL of the git repository');
  });
});
