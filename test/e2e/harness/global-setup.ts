/**
 * @module e2e/harness/global-setup
 * Brings up everything the e2e suite runs against, once per `npm run test:e2e`:
 *   Go binaries (built once, cached) → etcd, kube-apiserver, kube-controller-manager (test/e2e/plane.mjs) →
 *   our manifests rendered for website-system: namespace, RBAC and ServiceAccount applied for real →
 *   our server, delegated, with that ServiceAccount's token and the rendered serving certificate →
 *   an ExternalName Service to 127.0.0.1 (no kubelet or kube-proxy here) and the rendered APIService with its
 *   caBundle → Available=True. Tests reach it only through kube-apiserver, except the header-spoofing checks.
 * Our server reaches kube-apiserver through fault-proxy.mjs, which a test may cut (reconciler-faults.test.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import YAML from 'yaml';
import { buildBinaries, startControlPlane } from '../plane.mjs';
import { generateServingCertificate, renderManifests, DEFAULT_NAMESPACE, APISERVICE_NAMES, SERVICE_NAME } from '../../../src/manifests/render.js';
import { kubectlOk, waitFor } from './kubectl.js';
import type { E2EState } from './state.js';
import { startWebsiteServer, stopWebsiteServer } from './website-server.js';

const MAIN = resolve(import.meta.dirname, '../../../dist/main.js');

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** kubeconfigFor writes a token kubeconfig for kube-apiserver. */
function kubeconfigFor(path: string, server: string, caFile: string, user: string, token: string): string {
  writeFileSync(
    path,
    YAML.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'e2e', cluster: { server, 'certificate-authority': caFile } }],
      users: [{ name: user, user: { token } }],
      contexts: [{ name: 'e2e', context: { cluster: 'e2e', user } }],
      'current-context': 'e2e',
    }),
    { mode: 0o600 },
  );
  return path;
}

const log = (msg: string) => process.stderr.write(`[e2e] ${msg}\n`);

/** startFaultProxy runs fault-proxy.mjs towards `server` (an https URL) and resolves its two ports. */
function startFaultProxy(server: string, logFile: string): Promise<{ child: ChildProcess; proxyPort: number; controlPort: number }> {
  const target = new URL(server).host;
  const child = spawn(process.execPath, [resolve(import.meta.dirname, 'fault-proxy.mjs'), '--target', target, '--log', logFile], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return new Promise((res, rej) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error('fault proxy did not start in 10 s')), 10_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      rej(e);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`fault proxy exited ${code} during start`)));
    child.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (!out.includes('\n')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout?.destroy();
      // Its stdin stays open: the proxy exits when it closes, so it dies with this process whatever happens.
      child.unref();
      (child.stdin as Socket | null)?.unref();
      const { proxyPort, controlPort } = JSON.parse(out) as { proxyPort: number; controlPort: number };
      res({ child, proxyPort, controlPort });
    });
  });
}

async function stopFaultProxy(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await Promise.race([gone, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const t0 = Date.now();
  const binDir = buildBinaries();
  log(`binaries in ${binDir} (${Date.now() - t0} ms)`);
  // The suite drives the kubectl built at the plane's version (npm test keeps the older one on the PATH: version
  // skew). Test workers are forked after this, so they inherit it.
  process.env['PATH'] = `${binDir}${delimiter}${process.env['PATH'] ?? ''}`;
  const dir = mkdtempSync(join(tmpdir(), 'website-e2e-'));
  const plane = await startControlPlane({ binDir, dir: join(dir, 'plane'), log });
  log(`control plane up in ${plane.timings.total} ms at ${plane.server} (${dir})`);
  let pidFile = '';
  let faultProxy: ChildProcess | undefined;
  const teardown = async () => {
    if (pidFile) await stopWebsiteServer(pidFile);
    if (faultProxy) await stopFaultProxy(faultProxy);
    await plane.stop();
    if (!process.env['E2E_KEEP']) rmSync(dir, { recursive: true, force: true });
    else log(`kept ${dir}`);
  };
  try {
    const admin = plane.kubeconfig;
    const namespace = DEFAULT_NAMESPACE;
    const port = await freePort();
    const serving = generateServingCertificate(namespace);
    const manifestsDir = join(dir, 'manifests');
    mkdirSync(manifestsDir);
    const files = renderManifests({ namespace, servingCert: serving, servicePort: port });
    for (const f of files) writeFileSync(join(manifestsDir, f.name), f.text);
    const byName = (n: string) => files.find((f) => f.name.startsWith(n));

    // Namespace, ServiceAccount and RBAC as an admin would apply them. No pod runs here (no kubelet), so
    // the StatefulSet is left out and the Service becomes an ExternalName to loopback.
    await kubectlOk(admin, ['apply', '-f', join(manifestsDir, byName('00')?.name ?? '')]);
    await kubectlOk(admin, ['apply', '-f', join(manifestsDir, byName('10')?.name ?? '')]);
    if (!byName('10')?.objects.some((o) => o.kind === 'ServiceAccount')) throw new Error('the rendered RBAC holds no ServiceAccount');
    await kubectlOk(admin, ['apply', '-f', '-'], {
      input: YAML.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: SERVICE_NAME, namespace },
        spec: { type: 'ExternalName', externalName: 'localhost', ports: [{ name: 'https', port, protocol: 'TCP' }] },
      }),
    });

    // Our server runs as that ServiceAccount, so the RBAC in the manifests is what it really has.
    const saToken = (await kubectlOk(admin, ['create', 'token', SERVICE_NAME, '-n', namespace, '--duration', '24h'])).trim();
    // Our server's calls to the cluster go through the fault proxy (127.0.0.1 is in kube-apiserver's serving SANs).
    const proxy = await startFaultProxy(plane.server, join(dir, 'fault-proxy.log'));
    faultProxy = proxy.child;
    const websiteKubeconfig = kubeconfigFor(
      join(dir, 'website-server.kubeconfig'),
      `https://127.0.0.1:${proxy.proxyPort}`,
      plane.caFile,
      `system:serviceaccount:${namespace}:${SERVICE_NAME}`,
      saToken,
    );
    const tlsDir = join(dir, 'serving');
    mkdirSync(tlsDir);
    writeFileSync(join(tlsDir, 'tls.crt'), serving.cert);
    writeFileSync(join(tlsDir, 'tls.key'), serving.key, { mode: 0o600 });
    writeFileSync(join(tlsDir, 'ca.crt'), serving.caCert);
    const website = {
      port,
      url: `https://127.0.0.1:${port}`,
      servingCAFile: join(tlsDir, 'ca.crt'),
      certDir: join(dir, 'website-certs'),
      dataDir: join(dir, 'website-data'),
      logFile: join(dir, 'website-server.log'),
      pidFile: join(dir, 'website-server.pid'),
      args: [] as string[],
    };
    website.args = [
      MAIN,
      '--port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      '--kubeconfig',
      websiteKubeconfig,
      '--tls-cert-file',
      join(tlsDir, 'tls.crt'),
      '--tls-private-key-file',
      join(tlsDir, 'tls.key'),
      '--data-dir',
      website.dataDir,
      '--cert-dir',
      website.certDir,
      '--log-level',
      'info',
      // The API suites run without reconcilers (their exact event and row expectations predate them); the reconciler
      // suites restart the server with them on (harness/reconcilers.ts).
      '--enable-reconcilers=false',
    ];
    pidFile = website.pidFile;
    await startWebsiteServer({ args: website.args, logFile: website.logFile, pidFile, url: website.url });
    log(`website-apiserver ready on ${website.url}`);

    // The Secret and the APIService exactly as rendered (caBundle, no insecureSkipTLSVerify).
    await kubectlOk(admin, ['apply', '-f', join(manifestsDir, byName('30')?.name ?? '')]);
    // One APIService per served version (v1 and v1alpha1): every one must be Available.
    await waitFor(
      'APIServices Available=True',
      async () => {
        const list = JSON.parse(await kubectlOk(admin, ['get', 'apiservice', ...APISERVICE_NAMES, '-o', 'json'])) as {
          items: { status?: { conditions?: { type: string; status: string }[] } }[];
        };
        return (
          list.items.length === APISERVICE_NAMES.length &&
          list.items.every((o) => o.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True'))
        );
      },
      90_000,
      500,
    );
    await waitFor(
      'websites in discovery',
      async () => (await kubectlOk(admin, ['api-resources', '--api-group=extensions.example.com'])).includes('websites'),
      60_000,
      500,
    );
    log(`APIService available; setup took ${Date.now() - t0} ms`);

    const state: E2EState = {
      dir,
      binDir,
      kubernetesVersion: readFileSync(join(binDir, 'kubernetes-version'), 'utf8').trim(),
      server: plane.server,
      etcdUrl: plane.etcdUrl,
      caFile: plane.caFile,
      kubeconfig: { admin, viewer: plane.tokens.viewer.kubeconfig, nobody: plane.tokens.nobody.kubeconfig, websiteServer: websiteKubeconfig },
      tokens: { admin: plane.tokens.admin.token, viewer: plane.tokens.viewer.token, nobody: plane.tokens.nobody.token },
      frontProxy: { caFile: plane.frontProxy.caFile, certFile: plane.frontProxy.certFile, keyFile: plane.frontProxy.keyFile },
      website,
      manifestsDir,
      namespace,
      faultProxy: { controlUrl: `http://127.0.0.1:${proxy.controlPort}`, logFile: join(dir, 'fault-proxy.log') },
    };
    project.provide('e2e', state);
  } catch (e) {
    await teardown().catch(() => undefined);
    throw e;
  }
  return teardown;
}
