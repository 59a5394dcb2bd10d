/**
 * @module observability/audit-event
 * One audit.k8s.io/v1 Event and its JSON line, byte for byte as kube-apiserver's log backend writes it
 * (k8s.io/apiserver pkg/apis/audit/v1/types.go, encoded by encoding/json): fields in the Go struct's order, empty
 * optional fields left out, map keys sorted, strings HTML-escaped (`&` is `\u0026`), timestamps as metav1.MicroTime
 * (`2006-01-02T15:04:05.000000Z`, UTC). Also the helpers the request side needs: a microsecond clock and the
 * source IPs of a request (k8s.io/apimachinery pkg/util/net SourceIPs).
 */
import { isIPv6 } from 'node:net';
import { goString, htmlSafe } from '../apis/meta/go-json.js';
import type { Level, Stage } from './audit-policy.js';

/** UserInfoJson is authentication/v1 UserInfo. */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** ObjectReference is audit/v1 ObjectReference. */
export interface ObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** ResponseStatus is the part of a metav1.Status the event keeps (LogResponseObject copies these fields). */
export interface ResponseStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: Record<string, unknown>;
  code?: number;
}

/** EventData is everything of an event but its stage and stage timestamp. */
export interface EventData {
  level: Level;
  auditID: string;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  /** The constrained impersonation verb that allowed impersonatedUser (authenticationMetadata). */
  impersonationConstraint?: string;
  sourceIPs: string[];
  userAgent: string;
  objectRef?: ObjectRef;
  responseStatus?: ResponseStatus;
  /** JSON text, compact and on one line. */
  requestObject?: string;
  /** JSON text, compact and on one line. */
  responseObject?: string;
  /** Microseconds since the epoch. */
  requestReceivedTimestamp: number;
  annotations?: Map<string, string>;
}

/** encodeEvent renders one event as its log line (with the trailing newline). */
export function encodeEvent(e: EventData, stage: Stage, stageTimestamp: number): string {
  let out = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${e.level}","auditID":${goString(e.auditID)},"stage":"${stage}"`;
  out += `,"requestURI":${goString(e.requestURI)},"verb":${goString(e.verb)},"user":${encodeUser(e.user)}`;
  if (e.impersonatedUser) out += `,"impersonatedUser":${encodeUser(e.impersonatedUser)}`;
  if (e.impersonationConstraint) out += `,"authenticationMetadata":{"impersonationConstraint":${goString(e.impersonationConstraint)}}`;
  if (e.sourceIPs.length) out += `,"sourceIPs":[${e.sourceIPs.map(goString).join(',')}]`;
  if (e.userAgent) out += `,"userAgent":${goString(e.userAgent)}`;
  if (e.objectRef) out += `,"objectRef":${encodeObjectRef(e.objectRef)}`;
  if (e.responseStatus) out += `,"responseStatus":${encodeStatus(e.responseStatus)}`;
  if (e.requestObject !== undefined) out += `,"requestObject":${e.requestObject}`;
  if (e.responseObject !== undefined) out += `,"responseObject":${e.responseObject}`;
  out += `,"requestReceivedTimestamp":"${microTime(e.requestReceivedTimestamp)}","stageTimestamp":"${microTime(stageTimestamp)}"`;
  if (e.annotations?.size) out += `,"annotations":${encodeStringMap(e.annotations)}`;
  return `${out}}\n`;
}

// Go sorts map keys by their bytes; annotation and extra keys are ASCII in practice, where that is code-unit order.
const sortedKeys = (keys: Iterable<string>) => [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

function encodeStringMap(m: Map<string, string>): string {
  return `{${sortedKeys(m.keys())
    .map((k) => `${goString(k)}:${goString(m.get(k) as string)}`)
    .join(',')}}`;
}

function encodeUser(u: AuditUser): string {
  const parts: string[] = [];
  if (u.username) parts.push(`"username":${goString(u.username)}`);
  if (u.uid) parts.push(`"uid":${goString(u.uid)}`);
  if (u.groups?.length) parts.push(`"groups":[${u.groups.map(goString).join(',')}]`);
  const extra = u.extra ?? {};
  const keys = sortedKeys(Object.keys(extra));
  if (keys.length) parts.push(`"extra":{${keys.map((k) => `${goString(k)}:[${(extra[k] ?? []).map(goString).join(',')}]`).join(',')}}`);
  return `{${parts.join(',')}}`;
}

const OBJECT_REF_FIELDS = ['resource', 'namespace', 'name', 'uid', 'apiGroup', 'apiVersion', 'resourceVersion', 'subresource'] as const;

function encodeObjectRef(r: ObjectRef): string {
  return `{${OBJECT_REF_FIELDS.filter((f) => r[f])
    .map((f) => `"${f}":${goString(r[f] as string)}`)
    .join(',')}}`;
}

// metav1.Status as encoding/json writes it: metadata is a struct (never omitted), the rest omitempty.
function encodeStatus(s: ResponseStatus): string {
  let out = '{"metadata":{}';
  if (s.status) out += `,"status":${goString(s.status)}`;
  if (s.message) out += `,"message":${goString(s.message)}`;
  if (s.reason) out += `,"reason":${goString(s.reason)}`;
  if (s.details) {
    const d = encodeDetails(s.details);
    if (d) out += `,"details":${d}`;
  }
  if (s.code) out += `,"code":${s.code}`;
  return `${out}}`;
}

// metav1.StatusDetails in field order (name, group, kind, uid, causes, retryAfterSeconds), empty ones left out.
function encodeDetails(d: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  for (const f of ['name', 'group', 'kind', 'uid']) if (typeof d[f] === 'string' && d[f]) parts.push(`"${f}":${goString(d[f] as string)}`);
  if (Array.isArray(d['causes']) && d['causes'].length) {
    const causes = (d['causes'] as Record<string, unknown>[]).map((c) => {
      const cp: string[] = [];
      for (const f of ['reason', 'message', 'field']) if (typeof c?.[f] === 'string' && c[f]) cp.push(`"${f}":${goString(c[f] as string)}`);
      return `{${cp.join(',')}}`;
    });
    parts.push(`"causes":[${causes.join(',')}]`);
  }
  if (typeof d['retryAfterSeconds'] === 'number' && d['retryAfterSeconds']) parts.push(`"retryAfterSeconds":${d['retryAfterSeconds']}`);
  return parts.length ? `{${parts.join(',')}}` : undefined;
}

/**
 * jsonText makes JSON text fit an event as a runtime.Unknown's raw bytes: compact (one line) and HTML-safe, as
 * encoding/json's compact() leaves them. Compact JSON from JSON.stringify only needs the HTML escapes.
 */
export function jsonText(raw: string): string {
  const compact = raw.includes('\n') || raw.includes('\r') ? JSON.stringify(JSON.parse(raw)) : raw;
  return htmlSafe(compact);
}

// A clock with microseconds that stays on the wall clock: performance.now() gives the sub-millisecond digits, and the
// offset is re-taken whenever it drifts more than a millisecond from Date.now() (a stepped system clock).
let offsetMs = Date.now() - performance.now();

/** nowMicros is the current time in microseconds since the epoch. */
export function nowMicros(): number {
  let t = offsetMs + performance.now();
  const wall = Date.now();
  if (t < wall - 1 || t > wall + 1) {
    offsetMs = wall - performance.now();
    t = offsetMs + performance.now();
  }
  return Math.floor(t * 1000);
}

/** microTime formats microseconds since the epoch as metav1.MicroTime (RFC 3339, six fraction digits, UTC). */
export function microTime(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, 23)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/**
 * canonicalIP parses an address as netutils.ParseIPSloppy does (IPv4 fields may have leading zeros) and prints it as
 * Go's net.IP.String: IPv4 (also IPv4-mapped IPv6) dotted, IPv6 in RFC 5952 form. undefined when it is no address.
 */
export function canonicalIP(text: string): string | undefined {
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const parts = v4.slice(1).map(Number);
    return parts.every((p) => p <= 255) ? parts.join('.') : undefined;
  }
  if (text.includes('%') || !isIPv6(text)) return undefined;
  let host: string;
  try {
    host = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(host);
  if (mapped) {
    const hi = parseInt(mapped[1] as string, 16);
    const lo = parseInt(mapped[2] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return host;
}

/**
 * sourceIPs is utilnet.SourceIPs: the X-Forwarded-For addresses (first header line, comma-separated, invalid ones
 * skipped), then X-Real-Ip unless already listed, then the connection's remote address unless it is already last.
 * Behind kube-apiserver, whose proxy appends the client to X-Forwarded-For, that is [client…, kube-apiserver].
 */
export function sourceIPs(forwardedFor: string | undefined, realIP: string | undefined, remoteAddress: string | undefined): string[] {
  const ips: string[] = [];
  for (const part of (forwardedFor ?? '').split(',')) {
    const ip = canonicalIP(part.trim());
    if (ip) ips.push(ip);
  }
  const real = realIP ? canonicalIP(realIP) : undefined;
  if (real && !ips.includes(real)) ips.push(real);
  const remote = remoteAddress ? canonicalIP(remoteAddress) : undefined;
  if (remote && ips[ips.length - 1] !== remote) ips.push(remote);
  return ips;
}
