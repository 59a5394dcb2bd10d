#!/usr/bin/env node
/**
 * @module bench/ceiling-server
 * The benchmark's "ceiling": the least our stack could do for the same requests. fastify over HTTPS with
 * client-certificate TLS, lmdb with the same durability and the same per-write work as src/storage/lmdb-storage.ts
 * (one write transaction that checks existence, bumps the revision and puts the object, its history event and the
 * counter, then a synced flush), JSON in and out — and nothing else: no schema validation, defaulting,
 * managedFields, authorization or admission. The gap between this and our server is our own machinery.
 *
 * node test/bench/ceiling-server.mjs --port P --data-dir D --tls-cert F --tls-key F --client-ca F
 * (port 0 picks a free one). Prints `listening https://127.0.0.1:<port>` once it serves.
 *
 * The history log is never compacted: a benchmark run is bounded, and compaction is not per-request work.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { open } from 'lmdb';
import { MAXIMUM_KEY } from 'ordered-binary';
import { patch, tables, website } from './dist.mjs';

const GROUP = 'extensions.example.com';
const VERSION = 'v1';
const API_VERSION = `${GROUP}/${VERSION}`;
const BASE = `/apis/${API_VERSION}`;
const REVISION = 'revision';

/**
 * @typedef {{ name?: string, namespace?: string, uid?: string, resourceVersion?: string, generation?: number,
 *   creationTimestamp?: string, [k: string]: unknown }} ObjectMeta
 * @typedef {{ apiVersion?: string, kind?: string, metadata: ObjectMeta, spec?: Record<string, any>,
 *   status?: Record<string, any>, [k: string]: unknown }} Obj
 * @typedef {[string, string]} Key [namespace, name]
 * @typedef {{ t: 'A' | 'M' | 'D', k: Key, o: Obj, ts: number }} LogEntry one history event, as lmdb-storage.ts stores it
 * @typedef {'ADDED' | 'MODIFIED' | 'DELETED'} EventType
 * @typedef {{ res: import('node:http').ServerResponse, after: number }} Watcher `after`: the last revision it has
 */

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'data-dir': { type: 'string' },
    'tls-cert': { type: 'string' },
    'tls-key': { type: 'string' },
    'client-ca': { type: 'string' },
  },
  strict: true,
});
/** @param {keyof typeof args} name */
function required(name) {
  const v = args[name];
  if (v === undefined || v === '') {
    process.stderr.write(`ceiling-server: --${name} is required\n`);
    process.exit(2);
  }
  return v;
}
const port = Number(required('port'));
const dataDir = required('data-dir');
const tls = { cert: readFileSync(required('tls-cert')), key: readFileSync(required('tls-key')), ca: readFileSync(required('client-ca')) };

// ---- storage: the same environment and settings as src/storage/lmdb-storage.ts ----

mkdirSync(dataDir, { recursive: true });
// Synced commits (lmdb's default; never noSync). noSubdir explicit, as ours: a dotted dir name would be taken as a file.
const root = open({ path: dataDir, maxDbs: 8, noSubdir: false });
/** @type {import('lmdb').Database<Obj, Key>} */
const objects = root.openDB('objects', { encoding: 'json' });
/** @type {import('lmdb').Database<LogEntry, number>} */
const events = root.openDB('events', { encoding: 'json' });
/** @type {import('lmdb').Database<number, string>} */
const meta = root.openDB('meta', { encoding: 'json' });

const TYPE_CODE = /** @type {const} */ ({ ADDED: 'A', MODIFIED: 'M', DELETED: 'D' });
/** @type {Record<LogEntry['t'], EventType>} */
const TYPE_NAME = { A: 'ADDED', M: 'MODIFIED', D: 'DELETED' };

/** rfc3339 is a timestamp at second precision, as Kubernetes writes creationTimestamp. */
const rfc3339 = () => `${new Date().toISOString().slice(0, 19)}Z`;

/** Failure is a refused request (a class, so `instanceof` tells it from an object, which may hold any key). */
class Failure {
  /** @param {number} code @param {string} reason @param {string} message */
  constructor(code, reason, message) {
    this.code = code;
    this.reason = reason;
    this.message = message;
  }
}

/** @typedef {{ type: EventType, object: Obj }} Change */

/**
 * write runs `decide` on the current object inside ONE write transaction; a change gets the next revision and is
 * put with its history event and the counter, as ours does. Resolves after the synced flush, then publishes.
 * decide must not throw after writing (lmdb would commit the partial writes), so checks return a Failure instead.
 * @param {Key} key
 * @param {(current: Obj | undefined) => Change | Failure} decide
 * @returns {Promise<Obj | Failure>}
 */
async function write(key, decide) {
  /** @type {Change | Failure | undefined} */
  let outcome;
  let revision = 0;
  await root.transaction(() => {
    const d = decide(objects.get(key));
    outcome = d;
    if (d instanceof Failure) return;
    revision = (meta.get(REVISION) ?? 0) + 1;
    d.object.metadata.resourceVersion = String(revision);
    if (d.type === 'DELETED') objects.remove(key);
    else objects.put(key, d.object);
    events.put(revision, { t: TYPE_CODE[d.type], k: key, o: d.object, ts: Date.now() });
    meta.put(REVISION, revision);
  });
  const d = /** @type {Change | Failure} */ (outcome);
  if (d instanceof Failure) return d;
  try {
    await root.flushed;
  } finally {
    // A commit that landed is in the history a replay reads, so live watchers get it even if the flush failed.
    publish(revision, key[0], d.type, d.object);
  }
  return d.object;
}

// ---- watch fan-out ----

/** Watchers by namespace; '' holds the all-namespace watchers. @type {Map<string, Set<Watcher>>} */
const watchers = new Map();
/** The last revision handed to watchers: replays read the log up to here, live delivery continues after it. */
let published = meta.get(REVISION) ?? 0;
/**
 * Flushed changes waiting for an earlier revision whose flush callback has not run yet (keeps delivery in order).
 * @type {Map<number, { ns: string, line: Buffer }>}
 */
const pending = new Map();

/** @param {EventType} type @param {Obj} object */
const watchLine = (type, object) => `${JSON.stringify({ type, object })}\n`;

/**
 * publish hands a committed change to the watchers of its namespace and the all-namespace ones, serialised once,
 * in revision order.
 * @param {number} revision
 * @param {string} ns
 * @param {EventType} type
 * @param {Obj} object
 */
function publish(revision, ns, type, object) {
  // Bytes, once: a string would be UTF-8 encoded again for every watcher.
  pending.set(revision, { ns, line: Buffer.from(watchLine(type, object)) });
  for (let next = pending.get(published + 1); next; next = pending.get(published + 1)) {
    pending.delete(++published);
    deliver(watchers.get(next.ns), published, next.line);
    deliver(watchers.get(''), published, next.line);
  }
}

/** @param {Set<Watcher> | undefined} set @param {number} revision @param {Buffer} line */
function deliver(set, revision, line) {
  if (!set) return;
  for (const w of set) {
    if (revision <= w.after) continue; // asked for a resourceVersion ahead of this change
    w.after = revision;
    w.res.write(line);
  }
}

/**
 * startWatch streams the changes after `rv` (replayed from the events log, then live). Without a resourceVersion
 * it first sends the current objects as ADDED, like kube-apiserver. Runs synchronously up to registering the
 * watcher, so no change published meanwhile is missed or sent twice.
 * @param {import('node:http').ServerResponse} res
 * @param {string} ns '' for all namespaces
 * @param {string | undefined} rv
 */
function startWatch(res, ns, rv) {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
  // Clients wait for the headers before they count the watch as started.
  res.flushHeaders();
  const w = { res, after: published };
  const mine = (/** @type {string} */ n) => ns === '' || n === ns;
  if (rv === undefined || rv === '' || rv === '0') {
    const txn = root.useReadTransaction();
    try {
      for (const { key, value } of objects.getRange({ ...range(ns), transaction: txn })) {
        // Committed but not yet published changes arrive live, as ADDED or MODIFIED.
        if (Number(value.metadata.resourceVersion) > published) continue;
        if (mine(key[0])) res.write(watchLine('ADDED', value));
      }
    } finally {
      txn.done();
    }
  } else {
    const from = Number(rv);
    if (from < published) {
      for (const { value } of events.getRange({ start: from + 1, end: published + 1 })) {
        if (mine(value.k[0])) res.write(watchLine(TYPE_NAME[value.t], value.o));
      }
    } else w.after = from;
  }
  let set = watchers.get(ns);
  if (!set) watchers.set(ns, (set = new Set()));
  const s = set;
  s.add(w);
  res.on('close', () => s.delete(w));
}

// ---- helpers ----

/**
 * range is the lmdb key range of one namespace (ordered-binary's MAXIMUM_KEY sorts after every name), or of all.
 * @param {string} ns '' for all namespaces
 * @returns {{ start?: Key, end?: Key }}
 */
function range(ns) {
  return ns === '' ? {} : { start: /** @type {Key} */ (/** @type {unknown} */ ([ns])), end: /** @type {Key} */ (/** @type {unknown} */ ([ns, MAXIMUM_KEY])) };
}

/**
 * status is a metav1.Status failure.
 * @param {Failure} f
 * @param {string} [name]
 */
function status(f, name) {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: f.message,
    reason: f.reason,
    details: { ...(name ? { name } : {}), group: GROUP, kind: 'websites' },
    code: f.code,
  };
}

/** @param {string} name */
const notFound = (name) => new Failure(404, 'NotFound', `websites.${GROUP} "${name}" not found`);

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);

// The same pure helpers our server uses (RFC 7386 merge patch, the kind's Table conversion): the ceiling skips
// our machinery around them, not the wire format they produce.
const { mergePatch } = patch;
const def = /** @type {import('../../src/registry/resource.js').ResourceDefinition} */ (/** @type {unknown} */ (website.websiteDefinition));
/**
 * table is the meta.k8s.io/v1 Table kubectl asks for, with rows carrying PartialObjectMetadata (includeObject=Metadata).
 * @param {Obj[]} items
 * @param {string} resourceVersion
 */
const table = (items, resourceVersion) => tables.toTable(def, items, { resourceVersion }, { version: 'v1', includeObject: 'Metadata' });

// ---- HTTP ----

const app = Fastify({
  logger: false,
  bodyLimit: 3 * 1024 * 1024,
  // Only clients with a certificate signed by --client-ca get through the handshake; no further authentication.
  https: { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true },
});
app.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, app.getDefaultJsonParser('error', 'error'));

app.get('/readyz', async (_req, reply) => reply.type('text/plain').send('ok'));
app.get('/livez', async (_req, reply) => reply.type('text/plain').send('ok'));

/** @typedef {{ ns: string }} NsParams */
/** @typedef {{ ns: string, name: string }} NameParams */
/** @typedef {{ watch?: string, resourceVersion?: string }} ListQuery */

/**
 * list answers a list (JSON or Table) or, with watch=true|1, a watch of one namespace ('' = all).
 * @param {string} ns
 * @param {import('fastify').FastifyRequest<{ Querystring: ListQuery }>} req
 * @param {import('fastify').FastifyReply} reply
 * @returns {void}
 */
function list(ns, req, reply) {
  const { watch, resourceVersion } = req.query;
  if (watch === 'true' || watch === '1') {
    reply.hijack();
    startWatch(reply.raw, ns, resourceVersion);
    return;
  }
  // Counter and scan in one read transaction, so the list is exactly the state at its resourceVersion.
  const txn = root.useReadTransaction();
  /** @type {Obj[]} */
  let items;
  let rv;
  try {
    rv = String(meta.get(REVISION, { transaction: txn }) ?? 0);
    items = Array.from(objects.getRange({ ...range(ns), transaction: txn }), ({ value }) => value);
  } finally {
    txn.done();
  }
  // Sent, not returned: a sync handler's return value would be sent a second time.
  reply.send(
    (req.headers.accept ?? '').includes('as=Table')
      ? table(items, rv)
      : { apiVersion: API_VERSION, kind: 'WebsiteList', metadata: { resourceVersion: rv }, items },
  );
}

app.get(`${BASE}/websites`, (/** @type {import('fastify').FastifyRequest<{ Querystring: ListQuery }>} */ req, reply) => {
  list('', req, reply);
});
app.get(`${BASE}/namespaces/:ns/websites`, (/** @type {import('fastify').FastifyRequest<{ Params: NsParams, Querystring: ListQuery }>} */ req, reply) => {
  list(req.params.ns, req, reply);
});

app.post(`${BASE}/namespaces/:ns/websites`, async (/** @type {import('fastify').FastifyRequest<{ Params: NsParams, Body: unknown }>} */ req, reply) => {
  const { ns } = req.params;
  const body = req.body;
  const name = isObject(body) && isObject(body.metadata) ? body.metadata.name : undefined;
  if (!isObject(body) || typeof name !== 'string' || name === '') {
    return reply.code(400).send(status(new Failure(400, 'BadRequest', 'metadata.name is required')));
  }
  const obj = /** @type {Obj} */ (body);
  obj.metadata = { ...obj.metadata, namespace: ns, uid: randomUUID(), creationTimestamp: rfc3339(), generation: 1 };
  const r = await write([ns, name], (cur) =>
    cur ? new Failure(409, 'AlreadyExists', `websites.${GROUP} "${name}" already exists`) : { type: 'ADDED', object: obj },
  );
  return r instanceof Failure ? reply.code(r.code).send(status(r, name)) : reply.code(201).send(r);
});

app.get(`${BASE}/namespaces/:ns/websites/:name`, async (/** @type {import('fastify').FastifyRequest<{ Params: NameParams }>} */ req, reply) => {
  const { ns, name } = req.params;
  const obj = objects.get([ns, name]);
  return obj ? reply.send(obj) : reply.code(404).send(status(notFound(name), name));
});

app.patch(
  `${BASE}/namespaces/:ns/websites/:name`,
  async (/** @type {import('fastify').FastifyRequest<{ Params: NameParams, Body: unknown }>} */ req, reply) => {
    const { ns, name } = req.params;
    if (!(req.headers['content-type'] ?? '').startsWith('application/merge-patch+json')) {
      const f = new Failure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format: ${req.headers['content-type']}`);
      return reply.code(415).send(status(f, name));
    }
    const patch = req.body;
    const r = await write([ns, name], (cur) => {
      if (!cur) return notFound(name);
      const next = /** @type {Obj} */ (mergePatch(cur, patch));
      if (!isObject(next.metadata)) next.metadata = {};
      // Identity and system fields stay the stored ones, whatever the patch says.
      const m = cur.metadata;
      next.metadata = { ...next.metadata, name: m.name, namespace: m.namespace, uid: m.uid, creationTimestamp: m.creationTimestamp, generation: m.generation };
      if (JSON.stringify(next.spec) !== JSON.stringify(cur.spec)) next.metadata.generation = (m.generation ?? 1) + 1;
      return { type: 'MODIFIED', object: next };
    });
    return r instanceof Failure ? reply.code(r.code).send(status(r, name)) : reply.send(r);
  },
);

app.delete(`${BASE}/namespaces/:ns/websites/:name`, async (/** @type {import('fastify').FastifyRequest<{ Params: NameParams }>} */ req, reply) => {
  const { ns, name } = req.params;
  // The last state, stamped with the deletion's revision (write sets it), is both the answer and the event.
  const r = await write([ns, name], (cur) => (cur ? { type: 'DELETED', object: cur } : notFound(name)));
  return r instanceof Failure ? reply.code(r.code).send(status(r, name)) : reply.send(r);
});

// ---- lifecycle ----

let stopping = false;
async function shutdown() {
  if (stopping) return;
  stopping = true;
  // Watches first: fastify's close waits for their connections.
  for (const set of watchers.values()) for (const w of set) w.res.end();
  watchers.clear();
  await app.close();
  await root.flushed;
  await root.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());

await app.listen({ port, host: '127.0.0.1' });
const addr = app.server.address();
process.stdout.write(`listening https://127.0.0.1:${addr && typeof addr === 'object' ? addr.port : port}\n`);
