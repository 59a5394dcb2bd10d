// @ts-check
/**
 * @module e2e/harness/fault-proxy
 * A TCP pass-through between our server and kube-apiserver, so a test can make the cluster unreachable for our
 * server alone (kube-apiserver → our server traffic does not pass here). TLS stays end to end: bytes are copied,
 * never read. Runs as its own process so that any vitest worker can drive it over a small HTTP control port:
 *   POST /block    reset every open connection and every new one until unblocked
 *   POST /unblock  pass connections through again
 *   GET  /stats    { blocked, accepted, reset, open, blockedMs }
 *
 * Usage: node fault-proxy.mjs --target 127.0.0.1:6443 [--log FILE]
 * Prints one JSON line {"proxyPort":N,"controlPort":M} on stdout once both listen (127.0.0.1, free ports). Exits on
 * SIGTERM/SIGINT or when its stdin closes, so it cannot outlive the process that started it.
 */
import { appendFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer } from 'node:net';

/** @param {string} name */
function flag(name) {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

const target = flag('--target');
const logFile = flag('--log');
if (!target || !/^[^:]+:\d+$/.test(target)) {
  process.stderr.write('usage: node fault-proxy.mjs --target HOST:PORT [--log FILE]\n');
  process.exit(2);
}
const [targetHost, targetPort] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];

/** @param {string} msg @param {Record<string, unknown>} [fields] */
const log = (msg, fields = {}) => {
  if (logFile) appendFileSync(logFile, `${JSON.stringify({ time: Date.now(), msg, ...fields })}\n`);
};

let blocked = false;
let blockedAt = 0;
let blockedMs = 0;
let accepted = 0;
let reset = 0;
/** Client sockets with their upstream, so /block can cut both. @type {Set<{ client: import('node:net').Socket; upstream: import('node:net').Socket }>} */
const open = new Set();

/** resetSocket ends a socket with a TCP RST (what a dead or firewalled peer looks like), not a polite FIN. */
const resetSocket = (/** @type {import('node:net').Socket} */ s) => {
  if (!s.destroyed) s.resetAndDestroy();
};

const proxy = createServer((client) => {
  if (blocked) {
    reset++;
    resetSocket(client);
    return;
  }
  accepted++;
  const upstream = connect(targetPort, targetHost);
  const pair = { client, upstream };
  open.add(pair);
  const close = () => {
    open.delete(pair);
    client.destroy();
    upstream.destroy();
  };
  client.on('error', close).on('close', close);
  upstream.on('error', close).on('close', close);
  client.pipe(upstream);
  upstream.pipe(client);
});

const stats = () => ({ blocked, accepted, reset, open: open.size, blockedMs: blockedMs + (blocked ? Date.now() - blockedAt : 0) });

const control = createHttpServer((req, res) => {
  const reply = (/** @type {number} */ code, /** @type {unknown} */ body) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  if (req.method === 'POST' && req.url === '/block') {
    if (!blocked) {
      blocked = true;
      blockedAt = Date.now();
      const cut = open.size;
      for (const { client, upstream } of open) {
        resetSocket(client);
        resetSocket(upstream);
        reset++;
      }
      open.clear();
      log('blocked', { cut });
    }
    return reply(200, stats());
  }
  if (req.method === 'POST' && req.url === '/unblock') {
    if (blocked) {
      blocked = false;
      blockedMs += Date.now() - blockedAt;
      log('unblocked', stats());
    }
    return reply(200, stats());
  }
  if (req.method === 'GET' && req.url === '/stats') return reply(200, stats());
  reply(404, { error: `no ${req.method} ${req.url}` });
});

/** @param {import('node:net').Server} s @returns {Promise<number>} */
const listen = (s) =>
  new Promise((res, rej) => {
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      res(typeof a === 'object' && a ? a.port : 0);
    });
  });

const proxyPort = await listen(proxy);
const controlPort = await listen(control);
log('listening', { proxyPort, controlPort, target });
process.stdout.write(`${JSON.stringify({ proxyPort, controlPort })}\n`);

const exit = () => {
  for (const { client, upstream } of open) {
    client.destroy();
    upstream.destroy();
  }
  process.exit(0);
};
process.on('SIGTERM', exit).on('SIGINT', exit);
process.stdin.on('end', exit).on('close', exit).resume();
