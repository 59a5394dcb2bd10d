/**
 * @module endpoints/response-encoding
 * The last steps of every answer of a resource route, in kube-apiserver's order (responsewriters/writers.go):
 * 1. the format: JSON as the handler made it; YAML when negotiation chose it, converted from that JSON as kube
 *    converts its own (apis/meta/go-yaml.ts); an error Status in the form its Accept asks for (errorFormat), or
 *    indented JSON when nothing there fits (WriteRawJSON, which also never compresses);
 * 2. gzip for a body of more than 128 KiB when the client accepts it (content-encoding.ts).
 * Handlers build their answers as JSON and never think about either.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toGoYaml } from '../apis/meta/go-yaml.js';
import { acceptsGzip, compressesBody, gzipBody } from './content-encoding.js';
import { errorFormat } from './negotiation.js';

const inYaml = new WeakSet<FastifyRequest>();
const installed = new WeakSet<FastifyInstance>();

/** answerInYaml records that negotiation chose YAML for this request's answer. */
export function answerInYaml(req: FastifyRequest): void {
  inYaml.add(req);
}

/** installResponseEncoding adds (once per app) the onSend hook that formats and compresses answers. */
export function installResponseEncoding(app: FastifyInstance): void {
  if (installed.has(app)) return;
  installed.add(app);
  app.addHook('onSend', async (req, reply, payload) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    let body: string | Buffer = payload;
    if (isJson(reply)) {
      const format = reply.statusCode >= 400 ? errorFormat(req.headers.accept) : inYaml.has(req) ? 'yaml' : 'json';
      if (format === 'raw') {
        reply.header('content-type', 'application/json');
        return goIndentedJson(JSON.parse(body.toString()) as Record<string, unknown>);
      }
      if (format === 'yaml') body = Buffer.from(toGoYaml(JSON.parse(body.toString())));
      // kube names the media type alone (fastify would add `; charset=utf-8` to a serialized object).
      reply.header('content-type', format === 'yaml' ? 'application/yaml' : 'application/json');
    }
    if (!acceptsGzip(req.headers['accept-encoding'])) return body;
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    if (!compressesBody(bytes)) return bytes;
    reply.header('content-encoding', 'gzip');
    reply.header('vary', varyWith(reply.getHeader('vary')));
    reply.removeHeader('content-length');
    return gzipBody(bytes);
  });
}

const isJson = (reply: FastifyReply) => String(reply.getHeader('content-type') ?? '').startsWith('application/json');

// varyWith adds Accept-Encoding to a Vary header (kube's Header.Add).
function varyWith(current: unknown): string {
  const v = Array.isArray(current) ? current.join(', ') : typeof current === 'string' ? current : '';
  return v ? `${v}, Accept-Encoding` : 'Accept-Encoding';
}

// The Go field order of metav1.Status, StatusDetails and StatusCause (what json.MarshalIndent writes).
const STATUS_ORDER = ['kind', 'apiVersion', 'metadata', 'status', 'message', 'reason', 'details', 'code'];
const DETAILS_ORDER = ['name', 'group', 'kind', 'uid', 'causes', 'retryAfterSeconds'];
const CAUSE_ORDER = ['reason', 'message', 'field'];

function ordered(o: Record<string, unknown>, order: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of order) if (k in o) out[k] = o[k];
  for (const k of Object.keys(o)) if (!(k in out)) out[k] = o[k];
  return out;
}

/**
 * goIndentedJson is a Status as WriteRawJSON writes it: json.MarshalIndent with two spaces, Go's field order, and
 * Go's escapes of <, >, & and the line separators.
 */
export function goIndentedJson(status: Record<string, unknown>): string {
  const s = ordered(status, STATUS_ORDER);
  const details = s['details'] as Record<string, unknown> | undefined;
  if (details) {
    const d = ordered(details, DETAILS_ORDER);
    if (Array.isArray(d['causes'])) d['causes'] = (d['causes'] as Record<string, unknown>[]).map((c) => ordered(c, CAUSE_ORDER));
    s['details'] = d;
  }
  return JSON.stringify(s, null, 2).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
