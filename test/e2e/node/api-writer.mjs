#!/usr/bin/env node
/**
 * @module e2e/node/api-writer
 * A write load through kube-apiserver, as a client would make it, run inside the real-node sandbox's network
 * namespace (`RealNode.spawn`): `workers` loops, each owning the objects whose index is its own modulo `workers`.
 * A worker creates its objects first (up to `max` in all), then patches them round-robin, bumping the annotation
 * `e2e.example.com/seq` of each object by one per patch. A request that fails is retried with the same body until
 * it gets a definitive answer (a create that gets 409 AlreadyExists on a retry was applied by the attempt that
 * failed), so every object's writes stay in order. It prints one JSON line per answer:
 *   {"op":"create"|"patch","name","status","seq"?,"uid"?,"rv"?,"error"?,"t"}
 * and runs until stdin closes or SIGTERM, then finishes the requests in flight and exits 0.
 *
 *   node api-writer.mjs KUBECONFIG NAMESPACE PREFIX WORKERS MAX
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import YAML from 'yaml';

const [kubeconfigPath, namespace, prefix, workersArg, maxArg] = process.argv.slice(2);
if (!kubeconfigPath || !namespace || !prefix) throw new Error('usage: api-writer.mjs KUBECONFIG NAMESPACE PREFIX WORKERS MAX');
const workers = Number(workersArg ?? 4);
const max = Number(maxArg ?? 100);
const kc = YAML.parse(readFileSync(kubeconfigPath, 'utf8'));
const cluster = kc.clusters[0].cluster;
const token = kc.users[0].user.token;
const agent = new Agent({ connect: { ca: Buffer.from(cluster['certificate-authority-data'], 'base64') }, keepAliveTimeout: 10_000 });
const collection = `${cluster.server}/apis/extensions.example.com/v1/namespaces/${namespace}/websites`;
const SEQ = 'e2e.example.com/seq';

let stopping = false;
process.stdin.resume();
process.stdin.on('end', () => (stopping = true));
process.on('SIGTERM', () => (stopping = true));

/** @param {Record<string, unknown>} line */
const out = (line) => process.stdout.write(`${JSON.stringify({ ...line, t: Date.now() })}\n`);

/**
 * send makes one request; a transport failure is status 0.
 * @param {'POST' | 'PATCH'} method @param {string} url @param {unknown} body @param {string} type
 */
async function send(method, url, body, type) {
  try {
    const r = await request(url, {
      method,
      dispatcher: agent,
      body: JSON.stringify(body),
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
      headers: { authorization: `Bearer ${token}`, 'content-type': type, accept: 'application/json' },
    });
    const text = await r.body.text();
    let json;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: r.statusCode, json, text };
  } catch (e) {
    return { status: 0, json: undefined, text: String(/** @type {Error} */ (e).message ?? e) };
  }
}

/**
 * untilAnswered retries one write until it gets an answer that is not a transport failure, 429 or 5xx; every
 * answer is printed, so the test sees the errors clients saw.
 * @param {string} op @param {string} name @param {() => Promise<{status: number, json: any, text: string}>} attempt
 * @param {Record<string, unknown>} extra
 */
async function untilAnswered(op, name, attempt, extra) {
  for (let tries = 1; ; tries++) {
    const r = await attempt();
    const m = r.json?.metadata;
    const definitive = r.status !== 0 && r.status !== 429 && r.status < 500;
    out({
      op,
      name,
      status: r.status,
      tries,
      ...extra,
      uid: m?.uid,
      rv: m?.resourceVersion,
      error: definitive && r.status < 300 ? undefined : (r.json?.message ?? r.text).slice(0, 300),
    });
    if (definitive) return r;
    // A retry after a failure, as client-go's would for a retriable error (never given up: the test stops us).
    await sleep(200);
  }
}

/** @param {number} w */
async function worker(w) {
  const mine = [];
  for (let i = w; i < max; i += workers) mine.push(`${prefix}-${String(i).padStart(4, '0')}`);
  /** @type {Map<string, number>} */
  const seq = new Map();
  for (const name of mine) {
    if (stopping) return;
    await untilAnswered(
      'create',
      name,
      () =>
        send(
          'POST',
          collection,
          {
            apiVersion: 'extensions.example.com/v1',
            kind: 'Website',
            metadata: { name, annotations: { [SEQ]: '0' } },
            // No pods and no NodePort: the load is on the API, not on the node.
            spec: { replicas: 0, git: { repository: 'https://example.com/site.git' }, service: { type: 'ClusterIP' } },
          },
          'application/json',
        ),
      { seq: 0 },
    );
    seq.set(name, 0);
  }
  for (let k = 0; mine.length > 0 && !stopping; k++) {
    const name = mine[k % mine.length] ?? '';
    const next = (seq.get(name) ?? 0) + 1;
    await untilAnswered(
      'patch',
      name,
      () => send('PATCH', `${collection}/${name}`, { metadata: { annotations: { [SEQ]: String(next) } } }, 'application/merge-patch+json'),
      { seq: next },
    );
    seq.set(name, next);
  }
}

await Promise.all(Array.from({ length: workers }, (_, w) => worker(w)));
await agent.close();
process.exit(0);
