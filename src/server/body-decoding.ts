/**
 * @module server/body-decoding
 * A request body's text turned into a value with kube-apiserver's answers for text it cannot read, before anything
 * recursive touches it. Every failure is a 400 worded as kube words it where the body is of that kind:
 *
 * | body                          | malformed or too deep (JSON)                                                      |
 * |-------------------------------|-----------------------------------------------------------------------------------|
 * | create/update (JSON)          | `the object provided is unrecognized (must be of type Website): couldn't get version/kind; json parse error: <scanner error> (<first 30 bytes>)` (handlers/rest.go transformDecodeError, summarizeData) |
 * | create/update (YAML)          | the same with `yaml: line N: <error>`                                              |
 * | DELETE (DeleteOptions)        | `couldn't get version/kind; json parse error: <scanner error>` (handlers/delete.go)  |
 * | merge patch, JSON patch       | `invalid JSON patch` (handlers/patch.go validateAndTranscodePatch)                 |
 * | apply patch (YAML)            | `error encoding patch: yaml: line N: <error>`, too deep: `error decoding patch: error converting YAML to JSON: yaml: exceeded max depth of N` |
 *
 * A number that does not fit a float64 (`1e999`) is refused as Go's decoder refuses it (`json: cannot unmarshal
 * number 1e999 into Go value of type float64`) instead of becoming Infinity and then null. YAML aliases are bounded
 * (a billion-laughs document is `yaml: document contains excessive aliasing`, go-yaml's words) and so is the depth
 * of what they expand to. Nesting is bounded by MAX_NESTING_DEPTH (apis/meta/json-syntax.ts explains the number).
 *
 * The YAML text is parsed once: the concrete syntax tree (built without recursion) is measured, then composed.
 */
import type { FastifyRequest } from 'fastify';
import { Composer, Parser, type CST } from 'yaml';
import { badRequest, unsupportedMediaType, type StatusError } from '../apis/meta/errors.js';
import { jsonSyntaxError, MAX_NESTING_DEPTH, scanJsonShape } from '../apis/meta/json-syntax.js';
import { summarizeData } from '../registry/decode-errors.js';
import { recordDuplicates } from '../registry/duplicate-fields.js';

/**
 * BodyRole is what a body is to its handler: an object of `kind` (create, update, a subresource's object), the
 * DeleteOptions of a DELETE, a merge patch, an apply patch, or a body of a route that names no kind.
 */
export type BodyRole =
  | { role: 'object'; kind: string; apiVersion: string }
  | { role: 'delete' }
  | { role: 'merge-patch' }
  | { role: 'apply' }
  | { role: 'other' };

// A token character of RFC 2045 as Go's mime package reads it (printable ASCII but space and tspecials).
const isTokenChar = (c: string) => c > ' ' && c < '\x7f' && !'()<>@,;:\\"/[]?='.includes(c);

/**
 * goMediaType is mime.ParseMediaType: the lower-cased media type, or undefined when Go refuses the header (a
 * parameter without a value, a duplicate parameter, an unterminated quote, text after the subtype, ...).
 */
export function goMediaType(v: string): string | undefined {
  const semi = v.indexOf(';');
  const base = (semi < 0 ? v : v.slice(0, semi)).toLowerCase().trim();
  let i = 0;
  const token = (str: string, from: number) => {
    let j = from;
    while (j < str.length && isTokenChar(str[j] as string)) j++;
    return j;
  };
  i = token(base, 0);
  if (i === 0) return undefined;
  if (i < base.length) {
    if (base[i] !== '/') return undefined;
    const end = token(base, i + 1);
    if (end === i + 1 || end < base.length) return undefined;
  }
  const seen = new Set<string>();
  let rest = semi < 0 ? '' : v.slice(semi);
  for (;;) {
    rest = rest.trimStart();
    if (rest === '') return base;
    if (rest.trim() === ';') return base;
    if (rest[0] !== ';') return undefined;
    rest = rest.slice(1).trimStart();
    const k = token(rest, 0);
    if (k === 0) return undefined;
    const key = rest.slice(0, k).toLowerCase();
    rest = rest.slice(k).trimStart();
    if (rest[0] !== '=') return undefined;
    rest = rest.slice(1).trimStart();
    if (rest[0] === '"') {
      let j = 1;
      while (j < rest.length && rest[j] !== '"') j += rest[j] === '\\' ? 2 : 1;
      if (j >= rest.length) return undefined;
      rest = rest.slice(j + 1);
    } else {
      const e = token(rest, 0);
      if (e === 0) return undefined;
      rest = rest.slice(e);
    }
    if (seen.has(key)) return undefined;
    seen.add(key);
  }
}

const PATCH_TYPES = new Set([
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/apply-patch+yaml',
  'application/strategic-merge-patch+json',
]);

/**
 * unsupportedBody is kube's 415 for the Content-Type of a body other than a PATCH's (negotiation
 * NegotiateInputSerializer: the header is read with mime.ParseMediaType, and a patch type is no object type); a
 * PATCH's type is judged by its handler, which reads only what comes before `;` (handlers/patch.go). A type that
 * parses but is not decoded here is refused once the body is read (server.ts): refused before, the body unread, an
 * HTTP/2 stream would be reset, which costs kube-apiserver's proxy its client's connection.
 */
export function unsupportedBody(
  method: string,
  contentType: string | undefined,
  listed: readonly string[],
  decoded: readonly string[] = listed,
): StatusError | undefined {
  if (method === 'PATCH' || contentType === undefined || contentType === '') return undefined;
  const mt = goMediaType(contentType);
  if (mt === undefined || PATCH_TYPES.has(mt)) return unsupportedMediaType(listed, decoded);
  return undefined;
}

/**
 * undecodedType is kube's 415 for a create or update body of a type nothing here decodes, for the one case refused
 * before the body is read: a large one (server.ts), which kube-apiserver refuses before reading it too.
 */
export function undecodedType(method: string, contentType: string | undefined, listed: readonly string[], decoded: readonly string[]): StatusError | undefined {
  if ((method !== 'POST' && method !== 'PUT') || contentType === undefined || contentType === '') return undefined;
  const mt = goMediaType(contentType);
  return mt !== undefined && mt !== '*/*' && !decoded.includes(mt) ? unsupportedMediaType(listed, decoded) : undefined;
}

/** RoleKind is what bodyRoleOf needs of a resource: its group, version and plural (the routes' `config`) and its type. */
export interface RoleKind {
  plural: string;
  kind: string;
  group: string;
  version: string;
}

/**
 * bodyRoleOf returns how to read the body of a request: by its route's resource (`config.resource`), its
 * subresource (a Scale for /scale) and its method (a DELETE carries DeleteOptions).
 */
export function bodyRoleOf(kinds: readonly RoleKind[]): (req: FastifyRequest, contentType: 'json' | 'yaml' | 'merge-patch' | 'apply') => BodyRole {
  const byResource = new Map(kinds.map((k) => [`${k.group}/${k.version}/${k.plural}`, k]));
  return (req, contentType) => {
    if (contentType === 'merge-patch') return { role: 'merge-patch' };
    if (contentType === 'apply') return { role: 'apply' };
    if (req.method === 'DELETE') return { role: 'delete' };
    const route = req.routeOptions.config;
    const def = route?.resource === undefined ? undefined : byResource.get(`${route.group}/${route.version}/${route.resource}`);
    if (!def) return { role: 'other' };
    // A Scale on /scale: the kind's own /scale route, or the not-found route of a kind without one (kube decodes
    // the body before it finds there is no such subresource).
    const scale = req.routeOptions.url?.endsWith('/:name/scale') === true || (req.params as Record<string, string> | undefined)?.['subresource'] === 'scale';
    if (scale) return { role: 'object', kind: 'Scale', apiVersion: 'autoscaling/v1' };
    return { role: 'object', kind: def.kind, apiVersion: `${def.group}/${def.version}` };
  };
}

/** JsonParse is a JSON.parse that throws on text it refuses (fastify's secure parser: `__proto__` members too). */
export type JsonParse = (text: string) => unknown;

/**
 * decodeJsonBody reads a JSON body for its role; an empty body is undefined (the handler decides what that means).
 * `parse` runs only on text whose depth is within the limit.
 */
export function decodeJsonBody(text: string, role: BodyRole, parse: JsonParse): unknown {
  if (text.length === 0) return undefined;
  const shape = scanJsonShape(text);
  // A byte order mark is no JSON to Go (JSON.parse and secure-json-parse would skip it).
  if (shape.tooDeep || text.charCodeAt(0) === 0xfeff) throw jsonFailure(text, role);
  let value: unknown;
  try {
    value = parse(text);
  } catch (e) {
    // The scanner words a syntax error; text it accepts was refused for a member name (`__proto__`).
    if (jsonSyntaxError(text) !== undefined) throw jsonFailure(text, role);
    throw badRequest(`the request body was refused: ${(e as Error).message}`);
  }
  // Typed bodies (DeleteOptions, a Scale) are decoded from their bytes, whose decoders name the field; an
  // unstructured object or a merge patch has only float64 to offer.
  const unstructured = role.role === 'merge-patch' || (role.role === 'object' && role.kind !== 'Scale');
  if (shape.overflow !== undefined && unstructured) throw numberOverflow(shape.overflow, value, role);
  // Go's strict decoder reports duplicate members (a warning or a strict error, per fieldValidation).
  if (unstructured) recordDuplicates(text, shape.members, value);
  return value;
}

// jsonFailure is the 400 for JSON text the scanner refuses, worded for the body's role.
function jsonFailure(text: string, role: BodyRole): StatusError {
  const why = jsonSyntaxError(text) ?? 'unexpected end of JSON input';
  switch (role.role) {
    case 'object':
      return badRequest(
        `the object provided is unrecognized (must be of type ${role.kind}): couldn't get version/kind; json parse error: ${why} (${summarizeData(Buffer.from(text, 'utf8'))})`,
      );
    case 'merge-patch':
      return badRequest('invalid JSON patch');
    default:
      return badRequest(`couldn't get version/kind; json parse error: ${why}`);
  }
}

// numberOverflow is the 400 Go's decoder gives for a number beyond float64. An object body has had its type read by
// then (serializer/json Decode: defaulted from the URL), so it is `<Kind> in version "<v>" cannot be handled as ...`.
function numberOverflow(literal: string, value: unknown, role: BodyRole): StatusError {
  const why = `json: cannot unmarshal number ${literal} into Go value of type float64`;
  if (role.role !== 'object') return badRequest(`error decoding patch: ${why}`);
  const declared = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  const kind = typeof declared['kind'] === 'string' && declared['kind'] ? declared['kind'] : role.kind;
  const apiVersion = typeof declared['apiVersion'] === 'string' && declared['apiVersion'] ? declared['apiVersion'] : role.apiVersion;
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  return badRequest(`${kind} in version ${JSON.stringify(version)} cannot be handled as a ${role.kind}: ${why}`);
}

/**
 * checkJsonPatch refuses, before the patch decoder reads it, a JSON patch nested deeper than the limit (`invalid
 * JSON patch`) or holding a number beyond float64, which can only be an operation's value (patch.go decodes the
 * operations into jsonPatchOp first).
 */
export function checkJsonPatch(body: Buffer): void {
  const shape = scanJsonShape(body.toString('utf8'));
  if (shape.tooDeep) throw badRequest('invalid JSON patch');
  if (shape.overflow !== undefined) {
    throw badRequest(`error decoding patch: json: cannot unmarshal number ${shape.overflow} into Go struct field jsonPatchOp.value of type float64`);
  }
}

/** YAML_MAX_ALIAS_COUNT bounds alias expansion (the yaml package's measure; go-yaml's is a ratio of the same kind). */
const YAML_MAX_ALIAS_COUNT = 100;

/** YamlProblem is why a YAML text was refused, in go-yaml's words (`line` is 1-based, when known). */
class YamlProblem extends Error {
  constructor(
    readonly kind: 'syntax' | 'depth' | 'aliasing' | 'json',
    message: string,
    readonly line?: number,
  ) {
    super(message);
  }
}

/** decodeYamlBody reads a YAML body (create, update, DELETE, apply) for its role; empty text is undefined. */
export function decodeYamlBody(text: string, role: BodyRole): unknown {
  if (text.length === 0) return undefined;
  try {
    return parseYamlBounded(text);
  } catch (e) {
    if (!(e instanceof YamlProblem)) throw e;
    // go-yaml's errors read `yaml: line N: ...`; a value JSON cannot hold fails in the conversion after it.
    const where = e.kind === 'json' ? '' : `yaml: ${e.line !== undefined ? `line ${e.line}: ` : ''}`;
    switch (role.role) {
      case 'apply':
        return e.kind === 'depth'
          ? failWith(`error decoding patch: error converting YAML to JSON: yaml: ${e.message}`)
          : failWith(`error encoding patch: ${where}${e.message}`);
      case 'object':
        return failWith(
          `the object provided is unrecognized (must be of type ${role.kind}): ${where}${e.message} (${summarizeData(Buffer.from(text, 'utf8'))})`,
        );
      default:
        return failWith(`${where}${e.message}`);
    }
  }
}

const failWith = (message: string): never => {
  throw badRequest(message);
};

// lineOf is the 1-based line of a character offset.
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/**
 * parseYamlBounded parses one YAML document: the syntax tree is built without recursion and measured, and only a
 * document within the depth limit is composed (the composer recurses once per level). What aliases expand to is
 * measured too, since an alias repeats a whole subtree wherever it appears.
 */
function parseYamlBounded(text: string): unknown {
  const tokens = Array.from(new Parser().parse(text));
  let aliases = false;
  for (const token of tokens) {
    const m = measure(token);
    aliases ||= m.aliases;
    if (m.deepAt !== undefined) throw new YamlProblem('depth', `exceeded max depth of ${MAX_NESTING_DEPTH}`, lineOf(text, m.deepAt));
  }
  // YAML 1.1 merge keys (`<<: *base`), which go-yaml v2 under sigs.k8s.io/yaml applies.
  const composer = new Composer({ logLevel: 'error', merge: true });
  const docs = Array.from(composer.compose(tokens, true, text.length));
  // Only the first document counts, as yaml.v2's Unmarshal (sigs.k8s.io/yaml) reads only the first.
  const doc = docs[0];
  if (!doc) return null;
  const problem = doc.errors[0];
  if (problem) throw new YamlProblem('syntax', problem.message, lineOf(text, problem.pos[0]));
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: YAML_MAX_ALIAS_COUNT });
  } catch (e) {
    if (!(e instanceof ReferenceError)) throw e;
    const unresolved = /^Unresolved alias.*: (.*)$/.exec(e.message);
    if (unresolved) throw new YamlProblem('syntax', `unknown anchor '${unresolved[1]}' referenced`);
    throw new YamlProblem('aliasing', 'document contains excessive aliasing');
  }
  const found = walkValue(value, MAX_NESTING_DEPTH, aliases);
  if (found === 'deep') throw new YamlProblem('depth', `exceeded max depth of ${MAX_NESTING_DEPTH}`);
  // `.inf`, `.nan` and floats beyond float64 have no JSON form: sigs.k8s.io/yaml's conversion fails on them.
  if (typeof found === 'number') throw new YamlProblem('json', `json: unsupported value: ${Number.isNaN(found) ? 'NaN' : found > 0 ? '+Inf' : '-Inf'}`);
  return value;
}

// measure walks one top-level syntax token with an explicit stack: the offset where nesting first exceeds the limit,
// and whether the document holds any alias.
function measure(root: CST.Token): { deepAt?: number; aliases: boolean } {
  const stack: Array<[CST.Token, number]> = [[root, 0]];
  let aliases = false;
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [token, depth] = top;
    switch (token.type) {
      case 'document':
        if (token.value) stack.push([token.value, depth]);
        break;
      case 'alias':
        aliases = true;
        break;
      case 'block-map':
      case 'block-seq':
      case 'flow-collection': {
        if (depth + 1 > MAX_NESTING_DEPTH) return { deepAt: token.offset, aliases };
        for (const item of token.items as CST.CollectionItem[]) {
          if (item.key) stack.push([item.key, depth + 1]);
          if (item.value) stack.push([item.value, depth + 1]);
        }
        break;
      }
      default:
    }
  }
  return { aliases };
}

/**
 * walkValue looks, without recursion, through a value built from YAML for a number JSON cannot hold (returned) and,
 * when the document had aliases (they repeat whole subtrees, so the text's depth no longer bounds the value's), for
 * nesting deeper than `max` ('deep'). The walk stops after a bounded number of nodes: shared subtrees could make it
 * long, and the alias limit keeps honest documents far below that bound.
 */
function walkValue(value: unknown, max: number, aliases: boolean): 'deep' | number | undefined {
  const stack: Array<[unknown, number]> = [[value, 0]];
  let budget = 4_000_000;
  for (let top = stack.pop(); top; top = stack.pop()) {
    const [v, depth] = top;
    if (typeof v === 'number' && !Number.isFinite(v)) return v;
    if (typeof v !== 'object' || v === null) continue;
    if (--budget < 0) return 'deep';
    if (aliases && depth + 1 > max) return 'deep';
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return undefined;
}
