#!/usr/bin/env node
/**
 * @module e2e/node/forward
 * Ports of the real-node sandbox on 127.0.0.1 of the host. The sandbox's network namespace is private (nothing
 * routes there from the host), so a helper (this file run as a program, `bridge`) runs inside it and listens on Unix
 * sockets, which belong to no network namespace; the host listens on its own 127.0.0.1 ports and joins each
 * connection to a socket (`forward`). Used by the demo (../demo.mjs) and the real-node migration suite.
 *
 *   node forward.mjs TARGETS_JSON   (inside the sandbox: [{socket, host, port}, ...]; prints "ready", runs until stdin closes)
 */
import { connect, createServer } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';

const SELF = import.meta.filename;

/**
 * forward listens on 127.0.0.1 of the host (port `preferred` when free, else any) and joins each connection to
 * the bridge's Unix socket; resolves the port.
 * @param {import('node:net').Server[]} servers
 * @param {number} preferred
 * @param {string} socket
 * @returns {Promise<number>}
 */
export async function forward(servers, preferred, socket) {
  const server = createServer((client) => {
    const upstream = connect(socket);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  servers.push(server);
  for (const port of [preferred, 0]) {
    const ok = await new Promise((res) => {
      server.once('error', () => res(false));
      server.listen(port, '127.0.0.1', () => res(true));
    });
    if (ok) {
      const a = server.address();
      return typeof a === 'object' && a ? a.port : port;
    }
  }
  throw new Error('cannot listen on 127.0.0.1');
}

/**
 * startBridge starts the bridge inside the node's network namespace, with a socket per target in dir; resolves once
 * it listens. Closing its stdin ends it.
 * @param {import('./real-node.mjs').RealNode} node
 * @param {string} dir
 * @param {{name: string, host: string, port: number}[]} targets
 * @param {(m: string) => void} [log]
 */
export async function startBridge(node, dir, targets, log) {
  const withSockets = targets.map((t) => ({ ...t, socket: join(dir, `${t.name}.sock`) }));
  const child = node.spawn(process.execPath, [SELF, JSON.stringify(withSockets)]);
  child.stderr?.on('data', (b) => log?.(`[bridge] ${b}`));
  await new Promise((res, rej) => {
    child.stdout?.once('data', res);
    child.once('exit', (code) => rej(new Error(`the bridge exited (${code})`)));
  });
  return { child, targets: withSockets };
}

/**
 * toHost forwards each target of a new bridge to a free 127.0.0.1 port of the host; resolves the ports by target
 * name and a close that ends the listeners and the bridge.
 * @param {import('./real-node.mjs').RealNode} node
 * @param {string} dir
 * @param {{name: string, host: string, port: number}[]} targets
 */
export async function toHost(node, dir, targets) {
  const { child, targets: withSockets } = await startBridge(node, dir, targets);
  /** @type {import('node:net').Server[]} */
  const servers = [];
  /** @type {Record<string, number>} */
  const ports = {};
  for (const t of withSockets) ports[t.name] = await forward(servers, 0, t.socket);
  return {
    ports,
    close: () => {
      for (const s of servers) s.close();
      child.stdin?.end();
    },
  };
}

/** @param {{socket: string, host: string, port: number}[]} targets */
async function bridge(targets) {
  for (const t of targets) {
    rmSync(t.socket, { force: true });
    const server = createServer((client) => {
      const upstream = connect(t.port, t.host);
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    await new Promise((res) => server.listen(t.socket, () => res(undefined)));
  }
  process.stdout.write('ready\n');
  process.stdin.resume();
  process.stdin.on('close', () => process.exit(0));
  process.stdin.on('end', () => process.exit(0));
}

if (process.argv[1] === SELF && process.argv[2]) await bridge(JSON.parse(process.argv[2]));
