/**
 * @module bench/client
 * The one HTTP client every target is measured with: undici over keep-alive TLS connections with a client
 * certificate, a fixed number of requests in flight, and latencies recorded per request.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/**
 * @typedef {object} Tls
 * @property {string} ca PEM of the CA that signed the server's certificate
 * @property {string} cert client certificate PEM
 * @property {string} key its key
 * @property {string} [servername] a name the server's certificate holds, when not localhost
 */

/**
 * @typedef {object} Response
 * @property {number} status
 * @property {string} body
 */

/**
 * @typedef {object} HttpClient
 * @property {(method: import('undici').Dispatcher.HttpMethod, path: string, o?: {body?: unknown, contentType?: string, accept?: string}) => Promise<Response>} request
 * @property {() => Promise<void>} close
 */

/**
 * httpClient opens a pool of up to `connections` keep-alive TLS connections to `url`.
 * @param {string} url https://127.0.0.1:<port>
 * @param {Tls} tls
 * @param {number} connections
 * @returns {HttpClient}
 */
export function httpClient(url, tls, connections) {
  const pool = new Pool(url, {
    connections,
    pipelining: 1,
    // 10k-item lists of the CRD take seconds to encode; a watch stays open for the whole stage.
    headersTimeout: 120_000,
    bodyTimeout: 0,
    connect: { ca: tls.ca, cert: tls.cert, key: tls.key, servername: tls.servername ?? 'localhost' },
  });
  return {
    async request(method, path, o = {}) {
      /** @type {Record<string, string>} */
      const headers = { accept: o.accept ?? 'application/json' };
      let body;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] = o.contentType ?? 'application/json';
      }
      const r = await pool.request({ method, path, headers, body });
      return { status: r.statusCode, body: await r.body.text() };
    },
    close: () => pool.close(),
  };
}

/**
 * @typedef {object} RunResult
 * @property {number} count operations attempted
 * @property {number} errors operations that threw or answered an unexpected status
 * @property {string} [firstError]
 * @property {number} seconds wall time of the whole run
 * @property {Float64Array} latencies milliseconds, one per successful operation
 */

/**
 * runOps runs op(0..count-1) with `concurrency` of them in flight, and times each one. op throws (or
 * returns a string, the reason) when the server's answer is wrong; that counts as an error, not a latency.
 * @param {number} count
 * @param {number} concurrency
 * @param {(i: number) => Promise<string | void>} op
 * @returns {Promise<RunResult>}
 */
export async function runOps(count, concurrency, op) {
  const latencies = new Float64Array(count);
  let ok = 0;
  let errors = 0;
  /** @type {string | undefined} */
  let firstError;
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const t = performance.now();
      let failure;
      try {
        failure = await op(i);
      } catch (e) {
        failure = e instanceof Error ? e.message : String(e);
      }
      if (failure) {
        errors++;
        firstError ??= failure;
      } else latencies[ok++] = performance.now() - t;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { count, errors, firstError, seconds: (performance.now() - start) / 1000, latencies: latencies.slice(0, ok) };
}

/**
 * expect returns undefined when the status is the wanted one, else the reason (for runOps).
 * @param {Response} r
 * @param {number} status
 */
export function expectStatus(r, status) {
  return r.status === status ? undefined : `HTTP ${r.status} (wanted ${status}): ${r.body.slice(0, 200)}`;
}

/**
 * percentiles of a sample in milliseconds (nearest-rank), rounded to µs.
 * @param {Float64Array} sample
 * @returns {{p50Ms: number, p90Ms: number, p99Ms: number, maxMs: number}}
 */
export function percentiles(sample) {
  if (sample.length === 0) return { p50Ms: NaN, p90Ms: NaN, p99Ms: NaN, maxMs: NaN };
  const s = Float64Array.from(sample).sort();
  /** @param {number} q */
  const at = (q) => round3(s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN);
  return { p50Ms: at(0.5), p90Ms: at(0.9), p99Ms: at(0.99), maxMs: round3(s[s.length - 1] ?? NaN) };
}

/** @param {number} x */
export const round3 = (x) => Math.round(x * 1000) / 1000;

/**
 * throughput summarises a run as requests per second plus latency percentiles.
 * @param {RunResult} r
 */
export function throughput(r) {
  const done = r.latencies.length;
  return {
    value: Math.round((done / r.seconds) * 10) / 10,
    ...percentiles(r.latencies),
    count: r.count,
    errors: r.errors,
    ...(r.firstError ? { firstError: r.firstError } : {}),
    seconds: round3(r.seconds),
  };
}

/**
 * stageRunner returns `stage(id, fn)`: runs one measurement, stores its figures in out[id] and logs them; a stage that
 * throws records its error there instead and the run goes on with the next one.
 * @template F
 * @param {string} targetId
 * @param {Record<string, F | {error: string}>} out
 * @param {(m: string) => void} log
 * @returns {(id: string, fn: () => Promise<F>) => Promise<void>}
 */
export function stageRunner(targetId, out, log) {
  return async (id, fn) => {
    const t = performance.now();
    try {
      out[id] = await fn();
      log(`${targetId} ${id}: ${JSON.stringify(out[id])} (${Math.round(performance.now() - t)} ms)`);
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      out[id] = { error };
      log(`${targetId} ${id} FAILED: ${error}`);
    }
  };
}
