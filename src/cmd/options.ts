/**
 * @module cmd/options
 * Command-line flags, each also settable through an environment variable `WEBSITE_APISERVER_<FLAG>` (dashes
 * become underscores; repeatable flags take a comma-separated list). Flags win over the environment.
 * parseOptions returns every problem at once rather than stopping at the first, each as one line (an unknown flag
 * with the closest known one); main.ts prints them with a hint to --help rather than the whole usage.
 */
import type { AccessMode } from '../cluster/access.js';
import { isIP } from 'node:net';
import { readArgs } from './read-args.js';
import { kinds } from '../kinds/index.js';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat } from '../observability/logger.js';
import { DEFAULT_ETCD_PREFIX } from '../storage/etcd-defaults.js';

/** Options is the validated configuration of one server process. */
export interface Options {
  readonly port: number;
  readonly bindAddress: string;
  readonly dataDir: string;
  readonly certDir: string;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly tlsSans: readonly string[];
  readonly logLevel: string;
  /** --log-format: `text` (pino-pretty, for a person) or `json` (one object a line); by default text on a terminal. */
  readonly logFormat: LogFormat;
  /** Change events kept for resuming watches and older list snapshots. */
  readonly watchHistoryEvents: number;
  /** How long change events are kept, in ms. */
  readonly watchHistoryAgeMs: number;
  /** Interval of periodic watch BOOKMARKs, in ms. */
  readonly watchBookmarkIntervalMs: number;
  /** kubeconfig of the cluster to delegate to; unset means in-cluster config when running in a pod. */
  readonly kubeconfig: string | undefined;
  readonly authenticationMode: AccessMode;
  readonly authorizationMode: AccessMode;
  /** --lmdb-map-size in bytes: address space reserved for the lmdb map. */
  readonly lmdbMapSize: number;
  /** lmdb (embedded) or etcd. */
  readonly storageBackend: 'lmdb' | 'etcd';
  /** With etcd: its servers, prefix and TLS files. */
  readonly etcdServers: readonly string[];
  readonly etcdPrefix: string;
  readonly etcdCaFile: string | undefined;
  readonly etcdCertFile: string | undefined;
  readonly etcdKeyFile: string | undefined;
  /** The values of the kinds' controller flags (`--nginx-image`...), by flag name. */
  readonly kindFlags: ReadonlyMap<string, string>;
  readonly maxConcurrentReconciles: number;
  /** How often every object is reconciled even without a change, in ms. */
  readonly resyncPeriodMs: number;
  readonly leaderElect: boolean;
  /** Run the kinds' controllers (those that need a cluster only when one is configured). */
  readonly enableReconcilers: boolean;
  readonly leaderElectNamespace: string;
  /** --request-timeout in ms; on shutdown it bounds how long requests already begun may take (kube's ShutdownTimeout). */
  readonly requestTimeoutMs: number;
  /** --read-header-timeout in ms: how long a client may take to send a request's headers (and its TLS handshake). */
  readonly readHeaderTimeoutMs: number;
  /** --keep-alive-timeout in ms: how long an idle keep-alive connection is kept open. */
  readonly keepAliveTimeoutMs: number;
  /** --enable-http2: offer HTTP/2 (ALPN h2) beside HTTP/1.1. */
  readonly enableHttp2: boolean;
  /** --http2-max-streams-per-connection: MaxConcurrentStreams of an HTTP/2 connection (0: k8s.io/apiserver's 100). */
  readonly http2MaxStreamsPerConnection: number;
  /** --shutdown-delay-duration in ms: requests still served after SIGTERM while /readyz fails. */
  readonly shutdownDelayMs: number;
  /** --shutdown-send-retry-after: refuse new requests with 429 and keep listening until drained. */
  readonly shutdownSendRetryAfter: boolean;
  /** --shutdown-watch-termination-grace-period in ms: over how long open watches are ended on shutdown. */
  readonly shutdownWatchTerminationGracePeriodMs: number;
  /** --audit-policy-file: the audit.k8s.io/v1 Policy; unset: nothing is audited. */
  readonly auditPolicyFile: string | undefined;
  /** --audit-log-path: a file, or `-` for stdout; unset: nothing is audited. */
  readonly auditLogPath: string | undefined;
  /** --audit-log-maxsize (MiB, 0 = 100), --audit-log-maxbackup (0 = all), --audit-log-maxage (days, 0 = any). */
  readonly auditLogMaxSize: number;
  readonly auditLogMaxBackup: number;
  readonly auditLogMaxAge: number;
  /** --crd: CustomResourceDefinition files or directories whose kinds are served too. */
  readonly crdPaths: readonly string[];
  /** --self-managed-tls: the serving certificate kept in a cluster Secret, and the APIServices' caBundle with it. */
  readonly selfManagedTls: SelfManagedTlsOptions | undefined;
}

/** SelfManagedTlsOptions: the Secret, the APIServices to keep (empty: one per served group-version), how often. */
export interface SelfManagedTlsOptions {
  readonly secretName: string;
  readonly namespace: string;
  readonly apiServices: readonly string[];
  readonly checkIntervalMs: number;
}

export type { AccessMode };
const ACCESS_MODES: readonly AccessMode[] = ['auto', 'standalone', 'delegated'];

interface FlagSpec {
  name: string;
  default?: string;
  multiple?: boolean;
  help: string;
}

/** KIND_FLAGS are the flags the kinds' controllers take (their images and the like). */
export const KIND_FLAGS: readonly FlagSpec[] = kinds
  .flatMap((k) => k.controllers?.flags ?? [])
  .map((f) => ({ name: f.name, default: f.default, help: f.help }));

/** FLAGS documents every flag; --help prints them. */
export const FLAGS: readonly FlagSpec[] = [
  { name: 'port', default: '8443', help: 'HTTPS port to serve on (0 picks a free port).' },
  { name: 'bind-address', default: '127.0.0.1', help: 'IP address to listen on (0.0.0.0 for all interfaces).' },
  { name: 'data-dir', default: './data', help: 'Directory of the lmdb database.' },
  {
    name: 'lmdb-map-size',
    default: '16Gi',
    help: 'Address space reserved up front for the lmdb map (bytes, or with a suffix Ki, Mi, Gi, Ti). Neither disk nor memory: the file grows with the data; past this size the map grows by itself, but each growth leaves the old mapping in place and raises resident memory.',
  },
  { name: 'storage-backend', default: 'lmdb', help: 'lmdb (embedded, one replica: --data-dir) or etcd (several replicas: --etcd-servers).' },
  // kube-apiserver's names (k8s.io/apiserver pkg/server/options/etcd.go).
  { name: 'etcd-servers', help: 'With --storage-backend=etcd: the etcd servers to connect to, comma-separated (http:// or https://).' },
  { name: 'etcd-cafile', help: 'SSL Certificate Authority file used to secure etcd communication.' },
  { name: 'etcd-certfile', help: 'SSL certification file used to secure etcd communication.' },
  { name: 'etcd-keyfile', help: 'SSL key file used to secure etcd communication.' },
  { name: 'etcd-prefix', default: DEFAULT_ETCD_PREFIX, help: 'The prefix to prepend to all resource paths in etcd.' },
  { name: 'cert-dir', default: './certs', help: 'Directory for the generated CA, serving and admin certificates and the admin kubeconfig.' },
  { name: 'tls-cert-file', help: 'Serving certificate (PEM) to use instead of generating one; needs --tls-private-key-file.' },
  { name: 'tls-private-key-file', help: 'Private key (PEM) of --tls-cert-file.' },
  {
    name: 'tls-san',
    multiple: true,
    help: 'Extra subject alternative name (DNS name or IP) for the generated serving certificate; repeatable (comma-separated in the environment variable).',
  },
  {
    name: 'crd',
    multiple: true,
    help: "A CustomResourceDefinition file (YAML or JSON, several documents allowed) or a directory of them, whose kinds are served as kube-apiserver would serve them, beside Website; repeatable (comma-separated in the environment variable). A CRD kube would refuse stops the start with kube's message.",
  },
  { name: 'log-level', default: 'info', help: `Log level: ${LOG_LEVELS.join(', ')}.` },
  {
    name: 'log-format',
    help: 'text (readable lines, for a terminal) or json (one JSON object a line, for a log collector); by default text when stdout is a terminal, else json.',
  },
  {
    name: 'watch-history-events',
    default: '100000',
    help: 'How many recent changes are kept (in lmdb) so a watch can resume, even after a restart, and a paginated list can finish.',
  },
  { name: 'watch-history-age', default: '15m', help: 'How long changes are kept for resuming watches (a duration such as 90s, 15m, 1h30m).' },
  { name: 'watch-bookmark-interval', default: '1m', help: 'How often watches that allow bookmarks get a BOOKMARK with the current resourceVersion.' },
  {
    name: 'kubeconfig',
    help: 'kubeconfig of the cluster this server extends; without it the in-cluster service account is used when running in a pod, else the server runs standalone.',
  },
  {
    name: 'authentication-mode',
    default: 'auto',
    help: "auto (delegated when a cluster is configured), standalone (client certificates from our own CA only) or delegated (also the front proxy, the cluster's client CA and TokenReview).",
  },
  { name: 'max-concurrent-reconciles', default: '2', help: 'How many objects of each kind are reconciled at once.' },
  { name: 'resync-period', default: '10m', help: 'How often every object is reconciled even when nothing changed (a duration).' },
  {
    name: 'enable-reconcilers',
    default: 'true',
    help: "Run the kinds' controllers: all of them with a cluster, without one those that need none (false serves the API only).",
  },
  { name: 'leader-elect', default: 'false', help: 'Reconcile only while holding the Lease website-apiserver (true when several replicas share a cluster).' },
  { name: 'leader-elect-namespace', default: 'default', help: "Namespace of the leader-election Lease (the manifests use the server's own)." },
  {
    name: 'authorization-mode',
    default: 'auto',
    help: 'auto (delegated when a cluster is configured), standalone (every authenticated user is allowed) or delegated (SubjectAccessReview per request).',
  },
  // kube-apiserver's names and defaults (k8s.io/apiserver pkg/server/options/server_run_options.go).
  {
    name: 'request-timeout',
    default: '1m',
    help: 'How long a request other than a watch may take, body upload included, before it is answered 504 Timeout (a shorter ?timeout= applies); on shutdown, how long requests already begun may take to finish before the storage closes to them.',
  },
  // kube-apiserver's fixed values (k8s.io/apiserver pkg/server/secure_serving.go ReadHeaderTimeout, IdleTimeout).
  {
    name: 'read-header-timeout',
    default: '32s',
    help: 'How long a client may take to send the headers of a request (and to complete the TLS handshake) before the connection is closed.',
  },
  { name: 'keep-alive-timeout', default: '90s', help: 'How long an idle keep-alive connection is kept open waiting for the next request.' },
  {
    name: 'enable-http2',
    default: 'true',
    help: "Offer HTTP/2 (ALPN h2) beside HTTP/1.1, as kube-apiserver does: kube-apiserver's aggregator then multiplexes its requests here over few connections. false serves HTTP/1.1 only.",
  },
  // kube-apiserver's flag (k8s.io/apiserver pkg/server/options/serving.go).
  {
    name: 'http2-max-streams-per-connection',
    default: '0',
    help: "The limit that the server gives to clients for the maximum number of streams in an HTTP/2 connection. Zero means k8s.io/apiserver's default (100).",
  },
  {
    name: 'shutdown-delay-duration',
    default: '0s',
    help: 'Time to delay the termination: requests are still served normally, /healthz and /livez succeed, /readyz fails. Lets a load balancer stop sending traffic here.',
  },
  {
    name: 'shutdown-send-retry-after',
    default: 'false',
    help: 'If true, keep listening until the requests in flight are drained, refusing new ones with 429, Retry-After and Connection: close.',
  },
  // kube-apiserver's audit flags (k8s.io/apiserver pkg/server/options/audit.go); see "Audit logging" in docs/operations.md.
  { name: 'audit-policy-file', help: 'Path to the file that defines the audit policy configuration (audit.k8s.io/v1 Policy).' },
  { name: 'audit-log-path', help: "If set, all requests coming to the apiserver will be logged to this file. '-' means standard out." },
  { name: 'audit-log-maxsize', default: '0', help: 'The maximum size in megabytes of the audit log file before it gets rotated (0: 100).' },
  { name: 'audit-log-maxbackup', default: '0', help: 'The maximum number of old audit log files to retain (0: all).' },
  {
    name: 'audit-log-maxage',
    default: '0',
    help: 'The maximum number of days to retain old audit log files based on the timestamp encoded in their filename (0: no limit).',
  },
  {
    name: 'shutdown-watch-termination-grace-period',
    default: '0s',
    help: 'Over how long open watches are ended on shutdown (at least 200 a second); 0 ends them all at once.',
  },
  // cluster/self-managed-tls.ts; the one-file install (deploy/install.yaml) runs with it.
  {
    name: 'self-managed-tls',
    help: "Name of a kubernetes.io/tls Secret (ca.crt, ca.key, tls.crt, tls.key) the server keeps its serving certificate in: created or renewed when missing, expiring within 30 days or not valid for its APIServices' Service; the APIServices' caBundle is kept equal to its ca.crt. Needs a cluster; replaces --tls-cert-file.",
  },
  {
    name: 'self-managed-tls-namespace',
    help: "Namespace of the --self-managed-tls Secret; by default the environment variable POD_NAMESPACE (the downward API's metadata.namespace).",
  },
  {
    name: 'self-managed-tls-apiservices',
    help: 'APIServices whose caBundle --self-managed-tls keeps, comma-separated; by default one per served group-version (<version>.<group>).',
  },
  {
    name: 'self-managed-tls-check-interval',
    default: '10m',
    help: 'How often --self-managed-tls re-reads the Secret and the APIServices (a caBundle changed by someone else is put back).',
  },
  // Each kind's controllers declare their own (src/kinds/<kind>/controllers/registration.ts).
  ...KIND_FLAGS,
];

/** parseDuration reads a Go-style duration (`1h30m`, `90s`, `250ms`) into milliseconds; undefined if malformed. */
export function parseDuration(text: string): number | undefined {
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * (unit[m[2] as string] as number);
    pos = re.lastIndex;
  }
  return pos > 0 ? Math.round(total) : undefined;
}

/** parseByteSize reads a byte count with an optional binary suffix (`512Mi`, `16Gi`); undefined if malformed. */
export function parseByteSize(text: string): number | undefined {
  const m = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]) * 2 ** ({ Ki: 10, Mi: 20, Gi: 30, Ti: 40 }[m[2] ?? ''] ?? 0);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** envName is the environment variable of a flag. */
export const envName = (flag: string) => `WEBSITE_APISERVER_${flag.toUpperCase().replace(/-/g, '_')}`;

/**
 * servedSummary names what the kinds list serves, so --help cannot fall behind it: each kind with its served
 * versions, the storage version first (`Website (extensions.example.com/v1 and extensions.example.com/v1alpha1;
 * stored as v1)`).
 */
export function servedSummary(): string {
  return kinds
    .map((k) => {
      const { group, version, kind } = k.storage;
      const versions = [version, ...(k.converted ?? []).map((c) => c.definition.version)].map((v) => `${group}/${v}`);
      return `${kind} (${versions.join(' and ')}; stored as ${version})`;
    })
    .join(', ');
}

/** usage is the --help text. */
export function usage(): string {
  const lines = [
    'Usage: website-apiserver [flags]',
    '       website-apiserver backup|restore --help',
    '       website-apiserver version',
    '',
    `Serves ${servedSummary()} over HTTPS, in lmdb or etcd.`,
    '',
    'Flags:',
  ];
  for (const f of FLAGS) {
    const def = f.default !== undefined ? ` (default ${JSON.stringify(f.default)})` : '';
    lines.push(`  --${f.name}${f.multiple ? ' (repeatable)' : ''}${def}`, `      ${f.help} Env: ${envName(f.name)}.`);
  }
  lines.push('  -h, --help', '      Print this help and exit.', '  --version', '      Print the version (and the git commit when known) and exit.');
  return lines.join('\n');
}

/** USAGE_HINT follows the errors of a bad command line instead of the whole usage. */
export const USAGE_HINT = "Run 'website-apiserver --help' for usage.";

/** ParseResult is either options, a request for help or the version, or the list of errors (one line each). */
export type ParseResult = { kind: 'ok'; options: Options } | { kind: 'help' } | { kind: 'version' } | { kind: 'error'; errors: string[] };

/** ParseContext is what the defaults depend on besides the environment. */
export interface ParseContext {
  /** stdout is a terminal: --log-format defaults to text. */
  readonly stdoutIsTTY?: boolean;
}

// editDistance counts the insertions, deletions, substitutions and swaps of neighbours between a and b (optimal string
// alignment), for suggesting the flag a typo meant.
function editDistance(a: string, b: string): number {
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
      // Two letters swapped count as one edit.
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) cur[j] = Math.min(cur[j] as number, (before[j - 2] as number) + 1);
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length] as number;
}

/** suggestFlag names the known flag closest to an unknown one (a typo or a missing part), if one is close enough. */
export function suggestFlag(name: string, known: readonly string[]): string | undefined {
  let best: { flag: string; d: number } | undefined;
  for (const flag of known) {
    const d = flag.startsWith(name) || name.startsWith(flag) ? Math.min(1, editDistance(name, flag)) : editDistance(name, flag);
    if (!best || d < best.d) best = { flag, d };
  }
  return best && best.d <= Math.max(1, Math.floor(name.length / 4)) ? best.flag : undefined;
}

/**
 * parseOptions reads argv and env into validated Options. A command line that cannot be read (unknown flags, missing
 * values) is reported alone; otherwise every bad value is.
 */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, context: ParseContext = {}): ParseResult {
  const known = ['help', 'version', ...FLAGS.map((f) => f.name)];
  const { values, errors: argErrors } = readArgs(argv, FLAGS, ['help', 'version'], (name) => suggestFlag(name, known));
  if (argErrors.length) return { kind: 'error', errors: argErrors };
  if (values['help']) return { kind: 'help' };
  if (values['version']) return { kind: 'version' };
  const get = (name: string): string | undefined => {
    const v = values[name];
    if (typeof v === 'string') return v;
    return env[envName(name)] ?? FLAGS.find((f) => f.name === name)?.default;
  };
  const sans = (values['tls-san'] as string[] | undefined) ?? env[envName('tls-san')]?.split(',') ?? [];
  const crdPaths = ((values['crd'] as string[] | undefined) ?? env[envName('crd')]?.split(',') ?? []).map((s) => s.trim()).filter(Boolean);
  const errors: string[] = [];
  const portText = get('port') ?? '';
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535) errors.push(`--port: must be an integer from 0 to 65535, got "${portText}"`);
  const bindAddress = get('bind-address') ?? '';
  if (!isIP(bindAddress)) errors.push(`--bind-address: must be an IP address, got "${bindAddress}"`);
  const logLevel = get('log-level') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) errors.push(`--log-level: must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  const logFormat = get('log-format') ?? (context.stdoutIsTTY ? 'text' : 'json');
  if (!(LOG_FORMATS as readonly string[]).includes(logFormat)) errors.push(`--log-format: must be one of ${LOG_FORMATS.join(', ')}, got "${logFormat}"`);
  const tlsCertFile = get('tls-cert-file') || undefined;
  const tlsPrivateKeyFile = get('tls-private-key-file') || undefined;
  if (!!tlsCertFile !== !!tlsPrivateKeyFile) errors.push('--tls-cert-file and --tls-private-key-file must be given together');
  const dataDir = get('data-dir') ?? '';
  const certDir = get('cert-dir') ?? '';
  if (!dataDir) errors.push('--data-dir: must not be empty');
  if (!certDir) errors.push('--cert-dir: must not be empty');
  const historyText = get('watch-history-events') ?? '';
  const watchHistoryEvents = Number(historyText);
  if (!/^\d+$/.test(historyText) || watchHistoryEvents < 1) errors.push(`--watch-history-events: must be a positive integer, got "${historyText}"`);
  const durations: Record<string, number> = {};
  for (const name of ['watch-history-age', 'watch-bookmark-interval', 'resync-period']) {
    const text = get(name) ?? '';
    const ms = parseDuration(text);
    if (ms === undefined || ms <= 0) errors.push(`--${name}: must be a positive duration such as 90s or 15m, got "${text}"`);
    else durations[name] = ms;
  }
  const modes: Record<string, AccessMode> = {};
  for (const name of ['authentication-mode', 'authorization-mode']) {
    const text = get(name) ?? 'auto';
    if ((ACCESS_MODES as readonly string[]).includes(text)) modes[name] = text as AccessMode;
    else errors.push(`--${name}: must be one of ${ACCESS_MODES.join(', ')}, got "${text}"`);
  }
  const reconcilesText = get('max-concurrent-reconciles') ?? '';
  const maxConcurrentReconciles = Number(reconcilesText);
  if (!/^\d+$/.test(reconcilesText) || maxConcurrentReconciles < 1)
    errors.push(`--max-concurrent-reconciles: must be a positive integer, got "${reconcilesText}"`);
  const leaderText = get('leader-elect') ?? 'false';
  if (!['true', 'false'].includes(leaderText)) errors.push(`--leader-elect: must be true or false, got "${leaderText}"`);
  const reconcilersText = get('enable-reconcilers') ?? 'true';
  if (!['true', 'false'].includes(reconcilersText)) errors.push(`--enable-reconcilers: must be true or false, got "${reconcilersText}"`);
  const mapSizeText = get('lmdb-map-size') ?? '';
  const lmdbMapSize = parseByteSize(mapSizeText) ?? 0;
  // lmdb needs room for its meta pages and a few more; 1 MiB is a floor that rules out a forgotten suffix.
  if (lmdbMapSize < 2 ** 20) errors.push(`--lmdb-map-size: must be at least 1Mi, a byte count with an optional suffix Ki, Mi, Gi or Ti, got "${mapSizeText}"`);
  const backend = get('storage-backend') ?? 'lmdb';
  if (backend !== 'lmdb' && backend !== 'etcd') errors.push(`--storage-backend: must be lmdb or etcd, got "${backend}"`);
  const etcdServers = etcdServerList(get('etcd-servers'), 'etcd-servers', errors);
  if (backend === 'etcd' && etcdServers.length === 0) errors.push('--etcd-servers: required with --storage-backend=etcd');
  if (!!get('etcd-certfile') !== !!get('etcd-keyfile')) errors.push('--etcd-certfile and --etcd-keyfile must be given together');
  const shutdown = parseShutdownFlags(get, errors);
  const audit = parseAuditFlags(get, errors);
  const connection = parseConnectionFlags(get, errors);
  const selfManagedTls = parseSelfManagedTlsFlags(get, env, errors, !!tlsCertFile);
  if (errors.length) return { kind: 'error', errors };
  return {
    kind: 'ok',
    options: Object.freeze({
      port,
      bindAddress,
      dataDir,
      certDir,
      tlsCertFile,
      tlsPrivateKeyFile,
      tlsSans: Object.freeze(sans.map((s) => s.trim()).filter(Boolean)),
      logLevel,
      logFormat: logFormat as LogFormat,
      watchHistoryEvents,
      watchHistoryAgeMs: durations['watch-history-age'] as number,
      watchBookmarkIntervalMs: durations['watch-bookmark-interval'] as number,
      kubeconfig: get('kubeconfig') || undefined,
      authenticationMode: modes['authentication-mode'] as AccessMode,
      authorizationMode: modes['authorization-mode'] as AccessMode,
      storageBackend: backend as 'lmdb' | 'etcd',
      lmdbMapSize,
      etcdServers: Object.freeze(etcdServers),
      etcdPrefix: get('etcd-prefix') ?? DEFAULT_ETCD_PREFIX,
      etcdCaFile: get('etcd-cafile') || undefined,
      etcdCertFile: get('etcd-certfile') || undefined,
      etcdKeyFile: get('etcd-keyfile') || undefined,
      kindFlags: new Map(KIND_FLAGS.map((f) => [f.name, get(f.name) ?? ''])),
      maxConcurrentReconciles,
      resyncPeriodMs: durations['resync-period'] as number,
      leaderElect: leaderText === 'true',
      enableReconcilers: reconcilersText === 'true',
      leaderElectNamespace: get('leader-elect-namespace') ?? 'default',
      crdPaths: Object.freeze(crdPaths),
      selfManagedTls,
      ...shutdown,
      ...audit,
      ...connection,
    }),
  };
}

type ShutdownOptions = Pick<Options, 'requestTimeoutMs' | 'shutdownDelayMs' | 'shutdownSendRetryAfter' | 'shutdownWatchTerminationGracePeriodMs'>;

// parseShutdownFlags reads the graceful-termination flags (the delays may be 0, the request timeout may not).
function parseShutdownFlags(get: (name: string) => string | undefined, errors: string[]): ShutdownOptions {
  const ms = (name: string, min: number): number => {
    const text = get(name) ?? '';
    const v = parseDuration(text);
    if (v === undefined || v < min) errors.push(`--${name}: must be a ${min > 0 ? 'positive' : 'non-negative'} duration such as 90s or 1m, got "${text}"`);
    return v ?? 0;
  };
  const retryText = get('shutdown-send-retry-after') ?? 'false';
  if (!['true', 'false'].includes(retryText)) errors.push(`--shutdown-send-retry-after: must be true or false, got "${retryText}"`);
  return {
    requestTimeoutMs: ms('request-timeout', 1),
    shutdownDelayMs: ms('shutdown-delay-duration', 0),
    shutdownSendRetryAfter: retryText === 'true',
    shutdownWatchTerminationGracePeriodMs: ms('shutdown-watch-termination-grace-period', 0),
  };
}

type AuditFlags = Pick<Options, 'auditPolicyFile' | 'auditLogPath' | 'auditLogMaxSize' | 'auditLogMaxBackup' | 'auditLogMaxAge'>;

// parseAuditFlags reads the audit flags with kube's checks (AuditLogOptions.Validate; pflag's message for a non-integer).
function parseAuditFlags(get: (name: string) => string | undefined, errors: string[]): AuditFlags {
  const int = (name: string): number => {
    const text = get(name) ?? '0';
    if (!/^[+-]?\d+$/.test(text)) {
      errors.push(`invalid argument ${JSON.stringify(text)} for "--${name}" flag: strconv.ParseInt: parsing ${JSON.stringify(text)}: invalid syntax`);
      return 0;
    }
    const v = Number(text);
    if (v < 0) errors.push(`--${name} ${v} can't be a negative number`);
    return v;
  };
  return {
    auditPolicyFile: get('audit-policy-file') || undefined,
    auditLogPath: get('audit-log-path') || undefined,
    auditLogMaxSize: int('audit-log-maxsize'),
    auditLogMaxBackup: int('audit-log-maxbackup'),
    auditLogMaxAge: int('audit-log-maxage'),
  };
}

// parseConnectionFlags reads the connection time limits (positive durations, as Go's server needs them).
function parseConnectionFlags(
  get: (name: string) => string | undefined,
  errors: string[],
): Pick<Options, 'readHeaderTimeoutMs' | 'keepAliveTimeoutMs' | 'enableHttp2' | 'http2MaxStreamsPerConnection'> {
  const ms = (name: string): number => {
    const text = get(name) ?? '';
    const v = parseDuration(text);
    if (v === undefined || v <= 0) errors.push(`--${name}: must be a positive duration such as 90s or 1m, got "${text}"`);
    return v ?? 0;
  };
  const h2Text = get('enable-http2') ?? 'true';
  if (!['true', 'false'].includes(h2Text)) errors.push(`--enable-http2: must be true or false, got "${h2Text}"`);
  const streamsText = get('http2-max-streams-per-connection') ?? '0';
  const streams = Number(streamsText);
  if (!/^\d+$/.test(streamsText) || streams > 2 ** 31 - 1)
    errors.push(`--http2-max-streams-per-connection: must be a non-negative integer, got "${streamsText}"`);
  return {
    readHeaderTimeoutMs: ms('read-header-timeout'),
    keepAliveTimeoutMs: ms('keep-alive-timeout'),
    enableHttp2: h2Text === 'true',
    http2MaxStreamsPerConnection: streams,
  };
}

// parseSelfManagedTlsFlags reads --self-managed-tls and its companions (undefined without it).
function parseSelfManagedTlsFlags(
  get: (name: string) => string | undefined,
  env: NodeJS.ProcessEnv,
  errors: string[],
  tlsFiles: boolean,
): SelfManagedTlsOptions | undefined {
  const secretName = get('self-managed-tls') || undefined;
  const intervalText = get('self-managed-tls-check-interval') ?? '10m';
  const checkIntervalMs = parseDuration(intervalText);
  if (checkIntervalMs === undefined || checkIntervalMs <= 0)
    errors.push(`--self-managed-tls-check-interval: must be a positive duration such as 90s or 10m, got "${intervalText}"`);
  if (secretName === undefined) return undefined;
  const subdomain = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  if (!subdomain.test(secretName)) errors.push(`--self-managed-tls: "${secretName}" is not a valid Secret name (a DNS-1123 subdomain)`);
  if (tlsFiles) errors.push('--self-managed-tls and --tls-cert-file are exclusive: the serving certificate comes from one of them');
  const namespace = get('self-managed-tls-namespace') || env['POD_NAMESPACE'] || '';
  if (!namespace) errors.push('--self-managed-tls needs --self-managed-tls-namespace or the environment variable POD_NAMESPACE');
  const apiServices = (get('self-managed-tls-apiservices') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return Object.freeze({ secretName, namespace, apiServices: Object.freeze(apiServices), checkIntervalMs: checkIntervalMs ?? 0 });
}

/** etcdServerList reads a comma-separated list of etcd client URLs (--etcd-servers, migrate's --kube-etcd-servers). */
export function etcdServerList(text: string | undefined, flag: string, errors: string[]): string[] {
  const servers = (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const url of servers) if (!/^https?:\/\/[^/\s]+\/?$/.test(url)) errors.push(`--${flag}: "${url}" is not an http:// or https:// URL of a server`);
  return servers;
}
