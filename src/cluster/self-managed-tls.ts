/**
 * @module cluster/self-managed-tls
 * `--self-managed-tls SECRET`: the server keeps its own serving certificate in a kubernetes.io/tls Secret of the
 * cluster (ca.crt, ca.key, tls.crt, tls.key) and the `caBundle` of its APIServices equal to that CA, so a one-file
 * install (deploy/install.yaml) has real TLS with no generator and no cert-manager.
 *
 * At start and then every check interval: the APIServices are read (their spec.service names the DNS name
 * kube-aggregator verifies, `<service>.<namespace>.svc`); the Secret is read and kept if it is complete, its key
 * matches, it chains to its CA, its SANs cover those names and neither certificate expires within 30 days. Otherwise
 * a serving certificate is issued (signed by the stored CA while that CA has a key and a year left, so the caBundle
 * stays as it is; else by a new CA) and written: create, or update with the resourceVersion read. A 409 (another
 * replica wrote first) means re-read and take what it wrote if that passes the same checks, so replicas converge on
 * one Secret instead of overwriting each other. Then each APIService whose caBundle differs from ca.crt gets a JSON
 * merge patch of exactly that field.
 *
 * The CA key is stored in the Secret: any replica can renew the serving certificate under the same CA (no caBundle
 * change, no window in which kube-aggregator refuses a replica), and whoever can read the Secret gets nothing more
 * than tls.key already gives (the CA is trusted only through these APIServices' caBundle).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { createCa, createLeaf, forgeSigner, type ForgeSigner } from '../certs/issue.js';
import { CA_VALIDITY_DAYS, LEAF_VALIDITY_DAYS, RENEW_BEFORE_DAYS } from '../certs/self-signed.js';
import { isConflict, isNotFound } from '../apis/meta/errors.js';

const DAY_MS = 86_400_000;

/** DEFAULT_SERVICE is the Service assumed when no APIService can be read (the install's own). */
export const DEFAULT_SERVICE = 'website-apiserver';
/** LOOPBACK_SANS are in every certificate so the admin kubeconfig of --cert-dir can reach the server on its port. */
export const LOOPBACK_SANS = ['localhost', '127.0.0.1', '::1'] as const;

/** TlsSecretData is the Secret's content, decoded. */
export interface TlsSecretData {
  'ca.crt': string;
  'ca.key'?: string;
  'tls.crt': string;
  'tls.key': string;
}

/** serviceHosts are the DNS names a certificate for a Service carries; the first is what kube-aggregator verifies. */
export function serviceHosts(service: { name: string; namespace: string }): string[] {
  const { name, namespace } = service;
  return [`${name}.${namespace}.svc`, `${name}.${namespace}.svc.cluster.local`, `${name}.${namespace}`, name];
}

/**
 * secretProblem says why `data` cannot serve `required` (the `<service>.<namespace>.svc` names), or undefined when it
 * can: missing, incomplete, unparsable, key not matching, not signed by its CA, a name missing, or a certificate not
 * yet valid or expiring within RENEW_BEFORE_DAYS.
 */
export function secretProblem(data: Partial<TlsSecretData> | undefined, required: readonly string[], now = new Date()): string | undefined {
  if (data === undefined) return 'missing';
  const absent = (['ca.crt', 'tls.crt', 'tls.key'] as const).filter((k) => !data[k]);
  if (absent.length) return `lacks ${absent.join(', ')}`;
  let leaf: X509Certificate;
  let ca: X509Certificate;
  try {
    leaf = new X509Certificate(data['tls.crt']!);
    ca = new X509Certificate(data['ca.crt']!);
    if (!leaf.checkPrivateKey(createPrivateKey(data['tls.key']!))) return 'tls.key does not match tls.crt';
  } catch (e) {
    return `cannot parse the certificates or key: ${(e as Error).message}`;
  }
  if (!ca.ca || !ca.verify(ca.publicKey)) return 'ca.crt is not a self-signed CA certificate';
  if (!leaf.checkIssued(ca) || !leaf.verify(ca.publicKey)) return 'tls.crt is not signed by ca.crt';
  const have = new Set((leaf.subjectAltName ?? '').split(', '));
  const missing = required.filter((n) => !have.has(`DNS:${n}`));
  if (missing.length) return `tls.crt does not cover ${missing.join(', ')}`;
  for (const [what, x] of [
    ['tls.crt', leaf],
    ['ca.crt', ca],
  ] as const) {
    if (new Date(x.validFrom).getTime() > now.getTime()) return `${what} is not valid before ${x.validFrom}`;
    if (new Date(x.validTo).getTime() - now.getTime() < RENEW_BEFORE_DAYS * DAY_MS) return `${what} expires ${x.validTo} (within ${RENEW_BEFORE_DAYS} days)`;
  }
  return undefined;
}

// reusableCa is the stored CA as a signer when it has its key and will outlive a new leaf; else undefined.
function reusableCa(data: Partial<TlsSecretData> | undefined, now: Date): ForgeSigner | undefined {
  if (!data?.['ca.crt'] || !data['ca.key']) return undefined;
  try {
    const ca = new X509Certificate(data['ca.crt']);
    if (!ca.ca || !ca.checkPrivateKey(createPrivateKey(data['ca.key']))) return undefined;
    if (new Date(ca.validTo).getTime() - now.getTime() < (LEAF_VALIDITY_DAYS + RENEW_BEFORE_DAYS) * DAY_MS) return undefined;
    return forgeSigner(data['ca.crt'], data['ca.key']);
  } catch {
    return undefined;
  }
}

const lf = (pem: string): string => pem.replace(/\r\n/g, '\n');

/**
 * issueSecret makes a serving certificate for `hosts` (the first is its CN) plus LOOPBACK_SANS, signed by the CA of
 * `previous` when reusableCa allows, else by a new CA (CA_VALIDITY_DAYS; the leaf LEAF_VALIDITY_DAYS).
 */
export function issueSecret(hosts: readonly string[], previous: Partial<TlsSecretData> | undefined, now = new Date()): TlsSecretData {
  let signer = reusableCa(previous, now);
  let caCert = previous?.['ca.crt'];
  let caKey = previous?.['ca.key'];
  if (signer === undefined) {
    const made = createCa(now, `${hosts[0] ?? DEFAULT_SERVICE}-ca`, CA_VALIDITY_DAYS);
    signer = made.signer;
    caCert = made.certPem;
    caKey = made.keyPem;
  }
  const leaf = createLeaf(signer, now, new Date(Math.min(now.getTime() + LEAF_VALIDITY_DAYS * DAY_MS, signer.cert.validity.notAfter.getTime())), {
    subject: [{ shortName: 'CN', value: hosts[0] ?? DEFAULT_SERVICE }],
    extKeyUsage: { serverAuth: true },
    sans: [
      ...hosts.map((value) => ({ type: 'DNS' as const, value })),
      { type: 'DNS', value: 'localhost' },
      { type: 'IP', value: '127.0.0.1' },
      { type: 'IP', value: '::1' },
    ],
  });
  return { 'ca.crt': lf(caCert!), 'ca.key': lf(caKey!), 'tls.crt': lf(leaf.certPem), 'tls.key': lf(leaf.keyPem) };
}

/** StoredSecret is what the Secret client reads: the data and the resourceVersion to update it with. */
export interface StoredSecret {
  data: Partial<TlsSecretData>;
  resourceVersion: string;
}

/** SecretClient reads and writes the one Secret; create and replace throw an error with code 409 on a lost race. */
export interface SecretClient {
  read(): Promise<StoredSecret | undefined>;
  create(data: TlsSecretData): Promise<StoredSecret>;
  replace(data: TlsSecretData, resourceVersion: string): Promise<StoredSecret>;
}

/** EnsureResult is the Secret in effect and what was done to get it. */
export interface EnsureResult {
  data: TlsSecretData;
  action: 'reused' | 'created' | 'updated';
  /** Why a new certificate was issued (created/updated), or after how many lost races one was taken (reused). */
  reason?: string;
  resourceVersion: string;
}

/**
 * ensureSecret reads the Secret and keeps it when secretProblem finds none for `required`; else issues one (issueSecret
 * for `hosts`) and creates or updates it. A 409 re-reads (another replica won), at most `attempts` times.
 */
export async function ensureSecret(
  client: SecretClient,
  required: readonly string[],
  hosts: readonly string[],
  o: { now?: () => Date; attempts?: number } = {},
): Promise<EnsureResult> {
  const now = o.now ?? (() => new Date());
  const attempts = o.attempts ?? 5;
  let lost = 0;
  for (;;) {
    const current = await client.read();
    const problem = secretProblem(current?.data, required, now());
    if (problem === undefined) {
      return {
        data: current!.data as TlsSecretData,
        action: 'reused',
        resourceVersion: current!.resourceVersion,
        ...(lost ? { reason: `another writer won ${lost} race(s)` } : {}),
      };
    }
    const issued = issueSecret(hosts, current?.data, now());
    try {
      const written = current === undefined ? await client.create(issued) : await client.replace(issued, current.resourceVersion);
      return { data: issued, action: current === undefined ? 'created' : 'updated', reason: problem, resourceVersion: written.resourceVersion };
    } catch (e) {
      if (!isConflict(e) || ++lost >= attempts) throw e;
    }
  }
}

/** ApiServiceState is what is read of an APIService: where it points and its caBundle (base64). */
export interface ApiServiceState {
  service?: { name: string; namespace: string };
  caBundle?: string;
}

/** ApiServiceClient reads an APIService (undefined when there is none) and merge-patches its spec.caBundle. */
export interface ApiServiceClient {
  get(name: string): Promise<ApiServiceState | undefined>;
  patchCaBundle(name: string, caBundle: string): Promise<void>;
}

/** SyncResult tells which APIServices were patched and which do not exist. */
export interface SyncResult {
  patched: string[];
  missing: string[];
}

/**
 * syncCaBundles sets spec.caBundle of each named APIService (read into `states`) that differs from `caPem`. One with
 * no service is left alone: kube-apiserver serves it locally (a CRD's group-version kube's autoregister controller
 * keeps, until `migrate` points it here), and that controller would take any change back.
 */
export async function syncCaBundles(client: ApiServiceClient, states: ReadonlyMap<string, ApiServiceState | undefined>, caPem: string): Promise<SyncResult> {
  const want = Buffer.from(caPem, 'utf8').toString('base64');
  const patched: string[] = [];
  const missing: string[] = [];
  for (const [name, state] of states) {
    if (state === undefined) missing.push(name);
    else if (state.service !== undefined && state.caBundle !== want) {
      await client.patchCaBundle(name, want);
      patched.push(name);
    }
  }
  return { patched, missing };
}

/** requiredHosts are the `<service>.<namespace>.svc` names of the APIServices read (the fallback's when none). */
export function requiredHosts(states: ReadonlyMap<string, ApiServiceState | undefined>, fallbackNamespace: string): { required: string[]; hosts: string[] } {
  const services = [...states.values()].flatMap((s) => (s?.service ? [s.service] : []));
  if (services.length === 0) services.push({ name: DEFAULT_SERVICE, namespace: fallbackNamespace });
  const unique = [...new Map(services.map((s) => [`${s.name}.${s.namespace}`, s])).values()];
  return { required: unique.map((s) => serviceHosts(s)[0]!), hosts: [...new Set(unique.flatMap(serviceHosts))] };
}

/** SelfManagedTlsOptions configure startSelfManagedTls. */
export interface SelfManagedTlsOptions {
  kc: KubeConfig;
  namespace: string;
  secretName: string;
  apiServices: readonly string[];
  intervalMs: number;
  logger: Logger;
  /** onChange receives a serving certificate that replaced the one in use (another replica renewed it, or we did). */
  onChange(data: TlsSecretData): void;
}

/** SelfManagedTls is the running keeper: the certificate in effect, and stop. */
export interface SelfManagedTls {
  current(): TlsSecretData;
  /** check runs one round now (the timer runs them every intervalMs). */
  check(): Promise<void>;
  stop(): void;
}

const FIELD_MANAGER = 'website-apiserver';

/** clusterClients are the SecretClient and ApiServiceClient over the cluster's API. */
export async function clusterClients(kc: KubeConfig, namespace: string, secretName: string): Promise<{ secrets: SecretClient; apiServices: ApiServiceClient }> {
  const { CoreV1Api, ApiregistrationV1Api, PatchStrategy, setHeaderOptions } = await import('@kubernetes/client-node');
  const core = kc.makeApiClient(CoreV1Api);
  const reg = kc.makeApiClient(ApiregistrationV1Api);
  const decode = (d: Record<string, string> | undefined): Partial<TlsSecretData> =>
    Object.fromEntries(Object.entries(d ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
  const encode = (data: TlsSecretData) => Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
  const body = (data: TlsSecretData, resourceVersion?: string) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: {
      name: secretName,
      namespace,
      labels: { 'app.kubernetes.io/name': DEFAULT_SERVICE, 'app.kubernetes.io/managed-by': FIELD_MANAGER },
      ...(resourceVersion ? { resourceVersion } : {}),
    },
    data: encode(data),
  });
  const stored = (s: { data?: Record<string, string>; metadata?: { resourceVersion?: string } }): StoredSecret => ({
    data: decode(s.data),
    resourceVersion: s.metadata?.resourceVersion ?? '',
  });
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    secrets: {
      async read() {
        try {
          return stored(await core.readNamespacedSecret({ name: secretName, namespace }));
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      },
      async create(data) {
        return stored(await core.createNamespacedSecret({ namespace, body: body(data), fieldManager: FIELD_MANAGER }));
      },
      async replace(data, resourceVersion) {
        return stored(await core.replaceNamespacedSecret({ name: secretName, namespace, body: body(data, resourceVersion), fieldManager: FIELD_MANAGER }));
      },
    },
    apiServices: {
      async get(name) {
        try {
          const a = await reg.readAPIService({ name });
          const svc = a.spec?.service;
          return {
            ...(svc?.name && svc.namespace ? { service: { name: svc.name, namespace: svc.namespace } } : {}),
            ...(a.spec?.caBundle ? { caBundle: a.spec.caBundle } : {}),
          };
        } catch (e) {
          if (isNotFound(e)) return undefined;
          throw e;
        }
      },
      async patchCaBundle(name, caBundle) {
        await reg.patchAPIService({ name, body: { spec: { caBundle } }, fieldManager: FIELD_MANAGER }, merge);
      },
    },
  };
}

/**
 * startSelfManagedTls runs the first round (retrying for up to `startTimeoutMs` while the cluster does not answer)
 * and returns the certificate to serve; later rounds run every intervalMs and report a changed certificate.
 */
export async function startSelfManagedTls(o: SelfManagedTlsOptions, startTimeoutMs = 120_000): Promise<SelfManagedTls> {
  const log = o.logger.child({ subsystem: 'self-managed-tls', secret: `${o.namespace}/${o.secretName}` });
  const { secrets, apiServices } = await clusterClients(o.kc, o.namespace, o.secretName);
  let current: TlsSecretData | undefined;
  const round = async () => {
    const states = new Map<string, ApiServiceState | undefined>();
    for (const name of o.apiServices) states.set(name, await apiServices.get(name));
    const { required, hosts } = requiredHosts(states, o.namespace);
    const r = await ensureSecret(secrets, required, hosts);
    if (r.action !== 'reused' || r.reason) log.info({ action: r.action, reason: r.reason, hosts: required }, `serving certificate Secret ${r.action}`);
    const changed = current !== undefined && current['tls.crt'] !== r.data['tls.crt'];
    current = r.data;
    if (changed) {
      log.info('serving certificate changed: serving the new one');
      o.onChange(r.data);
    }
    const sync = await syncCaBundles(apiServices, states, r.data['ca.crt']);
    if (sync.patched.length) log.info({ apiServices: sync.patched }, "caBundle set to the Secret's ca.crt");
    if (sync.missing.length) log.warn({ apiServices: sync.missing }, 'APIService not found: its caBundle is set once it exists');
  };
  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    try {
      await round();
      break;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`--self-managed-tls: cannot keep Secret ${o.namespace}/${o.secretName}: ${(e as Error).message}`);
      log.warn({ err: (e as Error).message }, 'serving certificate Secret not ready yet, retrying');
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
  let running: Promise<void> | undefined;
  const check = async () => {
    running ??= round()
      .catch((e) => log.error({ err: (e as Error).message }, 'serving certificate check failed: retried next interval'))
      .finally(() => (running = undefined));
    await running;
  };
  const timer = setInterval(() => void check(), o.intervalMs);
  timer.unref();
  return { current: () => current!, check, stop: () => clearInterval(timer) };
}
