/**
 * @module cluster/self-managed-tls.test
 * The decisions of --self-managed-tls without a cluster: when the Secret is kept or replaced (missing, incomplete,
 * expiring, not covering the Service, key or CA not matching), that a renewal keeps a stored CA, that a lost race
 * re-reads and takes the winner's Secret (two writers converge on one), and which caBundles are patched.
 */
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ensureSecret,
  issueSecret,
  requiredHosts,
  secretProblem,
  serviceHosts,
  syncCaBundles,
  type ApiServiceClient,
  type ApiServiceState,
  type SecretClient,
  type StoredSecret,
} from './self-managed-tls.js';
import { parseOptions } from '../cmd/options.js';

const DAY = 86_400_000;
const NOW = new Date('2026-11-29T00:00:00Z');
const SVC = { name: 'website-apiserver', namespace: 'website-system' };
const HOSTS = serviceHosts(SVC);
const REQUIRED = [HOSTS[0]!];

const conflict = () => Object.assign(new Error('Operation cannot be fulfilled: the object has been modified'), { code: 409 });

/** memorySecrets is a Secret store with resourceVersions, as kube-apiserver checks them; hooks run before a write. */
function memorySecrets(hooks: { beforeWrite?: () => void } = {}) {
  const state: { secret?: StoredSecret; rv: number; writes: string[] } = { rv: 0, writes: [] };
  const client: SecretClient = {
    async read() {
      return state.secret && { data: { ...state.secret.data }, resourceVersion: state.secret.resourceVersion };
    },
    async create(data) {
      hooks.beforeWrite?.();
      if (state.secret) throw Object.assign(new Error('already exists'), { code: 409 });
      state.secret = { data: { ...data }, resourceVersion: String(++state.rv) };
      state.writes.push('create');
      return state.secret;
    },
    async replace(data, resourceVersion) {
      hooks.beforeWrite?.();
      if (!state.secret || state.secret.resourceVersion !== resourceVersion) throw conflict();
      state.secret = { data: { ...data }, resourceVersion: String(++state.rv) };
      state.writes.push(`replace@${resourceVersion}`);
      return state.secret;
    },
  };
  return { client, state };
}

describe('secretProblem', () => {
  const good = issueSecret(HOSTS, undefined, NOW);

  it('keeps a complete Secret valid for the Service for more than 30 days', () => {
    expect(secretProblem(good, REQUIRED, NOW)).toBeUndefined();
    expect(secretProblem(good, REQUIRED, new Date(NOW.getTime() + 300 * DAY))).toBeUndefined();
  });

  it('replaces a missing or incomplete one', () => {
    expect(secretProblem(undefined, REQUIRED, NOW)).toBe('missing');
    expect(secretProblem({ 'tls.crt': good['tls.crt'] }, REQUIRED, NOW)).toBe('lacks ca.crt, tls.key');
    expect(secretProblem({ ...good, 'tls.crt': 'garbage' }, REQUIRED, NOW)).toMatch(/^cannot parse/);
  });

  it('replaces one expiring within 30 days, or expired', () => {
    expect(secretProblem(good, REQUIRED, new Date(NOW.getTime() + 340 * DAY))).toMatch(/^tls\.crt expires .* \(within 30 days\)$/);
    expect(secretProblem(good, REQUIRED, new Date(NOW.getTime() + 400 * DAY))).toMatch(/^tls\.crt expires/);
  });

  it('replaces one whose SANs do not cover <service>.<namespace>.svc', () => {
    expect(secretProblem(good, ['website-apiserver.other.svc'], NOW)).toBe('tls.crt does not cover website-apiserver.other.svc');
  });

  it('replaces one whose key or CA does not match', () => {
    const other = issueSecret(HOSTS, undefined, NOW);
    expect(secretProblem({ ...good, 'tls.key': other['tls.key'] }, REQUIRED, NOW)).toBe('tls.key does not match tls.crt');
    expect(secretProblem({ ...good, 'ca.crt': other['ca.crt'] }, REQUIRED, NOW)).toBe('tls.crt is not signed by ca.crt');
    expect(secretProblem({ ...good, 'ca.crt': good['tls.crt'] }, REQUIRED, NOW)).toBe('ca.crt is not a self-signed CA certificate');
  });
});

describe('issueSecret', () => {
  it('issues a serverAuth certificate for the Service names and loopback, signed by a new CA with its key', () => {
    const s = issueSecret(HOSTS, undefined, NOW);
    const leaf = new X509Certificate(s['tls.crt']);
    expect(leaf.subject).toBe(`CN=${HOSTS[0]}`);
    expect(leaf.subjectAltName?.split(', ')).toEqual([...HOSTS.map((h) => `DNS:${h}`), 'DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1']);
    expect(leaf.checkIssued(new X509Certificate(s['ca.crt']))).toBe(true);
    expect(s['ca.key']).toMatch(/PRIVATE KEY/);
    expect(s['tls.crt']).not.toContain('\r');
  });

  it('renews under the stored CA while it has a key and time left, so the caBundle does not change', () => {
    const first = issueSecret(HOSTS, undefined, NOW);
    const renewed = issueSecret(HOSTS, first, new Date(NOW.getTime() + 340 * DAY));
    expect(renewed['ca.crt']).toBe(first['ca.crt']);
    expect(renewed['tls.crt']).not.toBe(first['tls.crt']);
    const noKey = { ...first, 'ca.key': undefined };
    expect(issueSecret(HOSTS, noKey, NOW)['ca.crt']).not.toBe(first['ca.crt']);
    // A CA with less than a leaf's life left is replaced too.
    expect(issueSecret(HOSTS, first, new Date(NOW.getTime() + 3400 * DAY))['ca.crt']).not.toBe(first['ca.crt']);
  });
});

describe('ensureSecret', () => {
  it('creates a missing Secret, then reuses it without writing', async () => {
    const { client, state } = memorySecrets();
    const created = await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    expect(created).toMatchObject({ action: 'created', reason: 'missing', resourceVersion: '1' });
    const again = await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    expect(again.action).toBe('reused');
    expect(again.data['tls.crt']).toBe(created.data['tls.crt']);
    expect(state.writes).toEqual(['create']);
  });

  it('updates an expiring Secret with the resourceVersion it read, keeping the CA', async () => {
    const { client, state } = memorySecrets();
    const first = await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    const later = await ensureSecret(client, REQUIRED, HOSTS, { now: () => new Date(NOW.getTime() + 340 * DAY) });
    expect(later.action).toBe('updated');
    expect(later.reason).toMatch(/expires/);
    expect(later.data['ca.crt']).toBe(first.data['ca.crt']);
    expect(state.writes).toEqual(['create', 'replace@1']);
  });

  it('updates a Secret that does not cover the Service', async () => {
    const { client } = memorySecrets();
    await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    const moved = serviceHosts({ name: 'website-apiserver', namespace: 'elsewhere' });
    const r = await ensureSecret(client, [moved[0]!], moved, { now: () => NOW });
    expect(r).toMatchObject({ action: 'updated', reason: 'tls.crt does not cover website-apiserver.elsewhere.svc' });
    expect(secretProblem(r.data, [moved[0]!], NOW)).toBeUndefined();
  });

  it("on a lost create race re-reads and takes the winner's Secret instead of overwriting it", async () => {
    const winner = issueSecret(HOSTS, undefined, NOW);
    let raced = false;
    const { client, state } = memorySecrets({
      beforeWrite: () => {
        if (raced) return;
        raced = true;
        state.secret = { data: winner, resourceVersion: '7' };
      },
    });
    const r = await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    expect(r).toMatchObject({ action: 'reused', resourceVersion: '7' });
    expect(r.data['tls.crt']).toBe(winner['tls.crt']);
    expect(state.writes).toEqual([]);
  });

  it("on a lost update race (409 Conflict) re-reads and takes the winner's renewal", async () => {
    const { client, state } = memorySecrets();
    await ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW });
    const later = new Date(NOW.getTime() + 340 * DAY);
    const winner = issueSecret(HOSTS, state.secret!.data, later);
    let raced = false;
    const hooked = memorySecrets({
      beforeWrite: () => {
        if (raced) return;
        raced = true;
        hooked.state.secret = { data: winner, resourceVersion: '2' };
      },
    });
    hooked.state.secret = state.secret;
    hooked.state.rv = 2;
    const r = await ensureSecret(hooked.client, REQUIRED, HOSTS, { now: () => later });
    expect(r.action).toBe('reused');
    expect(r.data['tls.crt']).toBe(winner['tls.crt']);
    expect(hooked.state.writes).toEqual([]);
  });

  it('two writers at once end with one Secret, and both serve it', async () => {
    const { client, state } = memorySecrets();
    const [a, b] = await Promise.all([ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW }), ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW })]);
    expect(state.writes).toEqual(['create']);
    expect(a.data['tls.crt']).toBe(b.data['tls.crt']);
    expect(a.data['tls.crt']).toBe(state.secret!.data['tls.crt']);
    expect([a.action, b.action].sort()).toEqual(['created', 'reused']);
  });

  it('gives up after repeated conflicts, with the conflict', async () => {
    const client: SecretClient = {
      read: async () => undefined,
      create: async () => {
        throw conflict();
      },
      replace: async () => {
        throw conflict();
      },
    };
    await expect(ensureSecret(client, REQUIRED, HOSTS, { now: () => NOW, attempts: 2 })).rejects.toMatchObject({ code: 409 });
  });

  it('passes on other errors at once', async () => {
    const client: SecretClient = {
      read: async () => {
        throw Object.assign(new Error('forbidden'), { code: 403 });
      },
      create: async () => {
        throw new Error('unreachable');
      },
      replace: async () => {
        throw new Error('unreachable');
      },
    };
    await expect(ensureSecret(client, REQUIRED, HOSTS)).rejects.toMatchObject({ code: 403 });
  });
});

describe('caBundles', () => {
  const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const b64 = Buffer.from(ca).toString('base64');

  it('patches exactly the APIServices that point at a service and whose caBundle differs, and reports missing ones', async () => {
    const patched: [string, string][] = [];
    const client: ApiServiceClient = { get: async () => undefined, patchCaBundle: async (n, v) => void patched.push([n, v]) };
    const states = new Map<string, ApiServiceState | undefined>([
      ['v1.extensions.example.com', { service: SVC, caBundle: b64 }],
      ['v1alpha1.extensions.example.com', { service: SVC, caBundle: Buffer.from('someone else').toString('base64') }],
      ['v1beta1.extensions.example.com', { service: SVC }],
      ['v2.extensions.example.com', undefined],
      // kube's own local APIService for a CRD not moved here yet: not ours to change.
      ['v1.stable.example.com', {}],
    ]);
    expect(await syncCaBundles(client, states, ca)).toEqual({
      patched: ['v1alpha1.extensions.example.com', 'v1beta1.extensions.example.com'],
      missing: ['v2.extensions.example.com'],
    });
    expect(patched.map(([, v]) => v)).toEqual([b64, b64]);
  });

  it("the certificate must cover the Services the APIServices name, else the install's in the Secret's namespace", () => {
    const states = new Map<string, ApiServiceState | undefined>([
      ['a', { service: { name: 'svc', namespace: 'ns1' } }],
      ['b', { service: { name: 'svc', namespace: 'ns1' } }],
      ['c', undefined],
    ]);
    expect(requiredHosts(states, 'website-system')).toEqual({
      required: ['svc.ns1.svc'],
      hosts: ['svc.ns1.svc', 'svc.ns1.svc.cluster.local', 'svc.ns1', 'svc'],
    });
    expect(requiredHosts(new Map([['c', undefined]]), 'website-system').required).toEqual(['website-apiserver.website-system.svc']);
  });
});

describe('the --self-managed-tls flags', () => {
  const parse = (argv: string[], env: NodeJS.ProcessEnv = {}) => parseOptions(argv, env);

  it('are off by default, and take the namespace from POD_NAMESPACE (the downward API) unless given', () => {
    expect(parse([])).toMatchObject({ kind: 'ok', options: { selfManagedTls: undefined } });
    expect(parse(['--self-managed-tls', 'website-apiserver-tls'], { POD_NAMESPACE: 'website-system' })).toMatchObject({
      kind: 'ok',
      options: { selfManagedTls: { secretName: 'website-apiserver-tls', namespace: 'website-system', apiServices: [], checkIntervalMs: 600_000 } },
    });
    expect(
      parse(
        ['--self-managed-tls=s', '--self-managed-tls-namespace=ns', '--self-managed-tls-apiservices=v1.a.b, v2.a.b', '--self-managed-tls-check-interval=2s'],
        { POD_NAMESPACE: 'other' },
      ),
    ).toMatchObject({
      kind: 'ok',
      options: { selfManagedTls: { secretName: 's', namespace: 'ns', apiServices: ['v1.a.b', 'v2.a.b'], checkIntervalMs: 2000 } },
    });
  });

  it('refuse a missing namespace, a bad Secret name, --tls-cert-file beside it and a bad interval', () => {
    expect(parse(['--self-managed-tls', 's'])).toEqual({
      kind: 'error',
      errors: ['--self-managed-tls needs --self-managed-tls-namespace or the environment variable POD_NAMESPACE'],
    });
    expect(parse(['--self-managed-tls', 'Bad_Name', '--self-managed-tls-namespace', 'ns'])).toMatchObject({
      kind: 'error',
      errors: [expect.stringContaining('not a valid Secret name')],
    });
    expect(parse(['--self-managed-tls', 's', '--self-managed-tls-namespace', 'ns', '--tls-cert-file', 'a', '--tls-private-key-file', 'b'])).toMatchObject({
      kind: 'error',
      errors: [expect.stringContaining('exclusive')],
    });
    expect(parse(['--self-managed-tls-check-interval', '0'])).toMatchObject({
      kind: 'error',
      errors: [expect.stringContaining('--self-managed-tls-check-interval')],
    });
  });
});
