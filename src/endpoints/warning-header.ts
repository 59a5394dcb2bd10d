/**
 * @module endpoints/warning-header
 * `Warning` response headers exactly as kube-apiserver writes them, and such that setting them can never fail (they
 * are set after the write committed: a throw there would turn a stored object into a 500).
 *
 * - Each text becomes `299 - "<text>"` with only `"` and `\` escaped (k8s.io/apimachinery pkg/util/net/http.go
 *   NewWarningHeader, makeQuotedString); the text travels as UTF-8 bytes, as Go writes header values.
 * - A text that is not valid UTF-8 or holds a control character is dropped, as NewWarningHeader refuses it.
 * - The recorder's limits (k8s.io/apiserver pkg/endpoints/filters/warning.go): texts are deduplicated; once they
 *   pass 4096 runes in all, every text is cut to 256 runes and those that still do not fit are left out.
 *
 * Node takes header values as Latin-1 strings, one character per byte, so the UTF-8 bytes are carried that way. It
 * writes the header block in the encoding of the first body chunk, though: a string body would re-encode those
 * characters as UTF-8, so a reply carrying such a header sends its body as bytes (warningBytes).
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

const TRUNCATE_AT_TOTAL_RUNES = 4 * 1024;
const TRUNCATE_ITEM_RUNES = 256;

// unicode.IsControl: C0, DEL and C1. A lone surrogate is a string Go would see as invalid UTF-8.
const CONTROL_OR_INVALID = /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const runes = (s: string) => Array.from(s);

// header is NewWarningHeader(299, "-", text) as the bytes Go sends, carried in a latin1 string (how Node writes headers).
function header(text: string): string {
  const quoted = `"${text.replace(/["\\]/g, (c) => `\\${c}`)}"`;
  return Buffer.from(`299 - ${quoted}`, 'utf8').toString('latin1');
}

/**
 * warningHeaders returns the `Warning` header values kube-apiserver's recorder ends up with after AddWarning of each
 * text in order: deduplicated, invalid ones dropped, and truncated once the texts pass 4096 runes.
 */
export function warningHeaders(texts: readonly string[]): string[] {
  const seen = new Set<string>();
  const ordered: string[] = [];
  let out: string[] = [];
  let written = 0;
  let truncating = false;
  const cut = (t: string) => {
    const r = runes(t);
    return r.length > TRUNCATE_ITEM_RUNES ? { text: r.slice(0, TRUNCATE_ITEM_RUNES).join(''), length: TRUNCATE_ITEM_RUNES } : { text: t, length: r.length };
  };
  for (const t of texts) {
    if (t.length === 0) continue;
    if (truncating && written >= TRUNCATE_AT_TOTAL_RUNES) break;
    if (seen.has(t)) continue;
    seen.add(t);
    ordered.push(t);
    const item = truncating ? cut(t) : { text: t, length: runes(t).length };
    if (CONTROL_OR_INVALID.test(item.text)) continue;
    if (written + item.length <= TRUNCATE_AT_TOTAL_RUNES || truncating) {
      written += item.length;
      out.push(header(item.text));
      continue;
    }
    // Over the limit: start again with every text so far cut to 256 runes.
    truncating = true;
    written = 0;
    out = [];
    for (const w of ordered) {
      const c = cut(w);
      if (CONTROL_OR_INVALID.test(c.text)) continue;
      written += c.length;
      out.push(header(c.text));
    }
  }
  return out;
}

// Replies whose Warning headers carry bytes above 0x7f, and the apps whose onSend hook turns their body into bytes.
const nonAscii = new WeakSet<FastifyReply>();
const installed = new WeakSet<FastifyInstance>();
// The warnings a reply carries so far.
const pending = new WeakMap<FastifyReply, string[]>();

/** sendWarnings sets the `Warning` headers of a reply; it never throws (the write they describe is already done). */
export function sendWarnings(reply: FastifyReply, texts: readonly string[]): void {
  if (texts.length === 0) return;
  try {
    // Warnings add up over a request (a deprecated version's, then the write's): the header carries them all.
    const all = [...(pending.get(reply) ?? []), ...texts];
    pending.set(reply, all);
    const values = warningHeaders(all);
    if (values.length === 0) return;
    reply.header('warning', values);
    if (values.some((v) => /[\x80-\xff]/.test(v))) nonAscii.add(reply);
  } catch (e) {
    reply.log.error({ err: e }, 'could not set the Warning headers');
  }
}

/** warningBytes installs (once per app) the onSend hook that sends as bytes the body of a reply sendWarnings marked. */
export function warningBytes(app: FastifyInstance): void {
  if (installed.has(app)) return;
  installed.add(app);
  app.addHook('onSend', (_req, reply, payload, done) => {
    done(null, nonAscii.has(reply) && typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload);
  });
}
