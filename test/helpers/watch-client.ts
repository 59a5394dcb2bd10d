/**
 * An HTTP watch of a test server over its own connection (node:https, so the end of the chunked stream and a reset
 * can be told apart): every event as it arrives, and how the stream ended.
 */
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerProcess } from './server-process.js';

/** WatchedEvent is one event, reduced to what the durability checks compare. */
export interface WatchedEvent {
  type: string;
  name: string;
  rv: number;
  replicas: number | undefined;
}

/** WatchClient is an open watch. */
export interface WatchClient {
  /** Events received so far, in arrival order. */
  events: WatchedEvent[];
  /** Resolves with 'end' for the end of the chunked stream, else what cut it (`error: ECONNRESET`, 'aborted'). */
  ended: Promise<string>;
  /** until resolves once an event with resourceVersion >= rv arrived (rejects after timeoutMs). */
  until(rv: number, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** openWatch starts `GET path?watch=1&resourceVersion=rv` and resolves once the 200 headers arrived. */
export function openWatch(srv: ServerProcess, path: string, rv: number): Promise<WatchClient> {
  const agent = new HttpsAgent({
    ca: readFileSync(join(srv.certDir, 'ca.crt')),
    cert: readFileSync(join(srv.certDir, 'admin.crt')),
    key: readFileSync(join(srv.certDir, 'admin.key')),
  });
  return new Promise((resolve, reject) => {
    const req = httpsRequest(`${srv.url}${path}?watch=1&resourceVersion=${rv}`, { agent });
    req.on('error', reject);
    req.on('response', (r) => {
      if (r.statusCode !== 200) {
        reject(new Error(`watch answered ${r.statusCode}`));
        return;
      }
      const events: WatchedEvent[] = [];
      const waiters: { rv: number; done: () => void }[] = [];
      let buf = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => {
        buf += c;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const e = JSON.parse(buf.slice(0, nl)) as {
            type: string;
            object: { metadata: { name?: string; resourceVersion: string }; spec?: { replicas?: number } };
          };
          buf = buf.slice(nl + 1);
          const ev = { type: e.type, name: e.object.metadata.name ?? '', rv: Number(e.object.metadata.resourceVersion), replicas: e.object.spec?.replicas };
          events.push(ev);
          for (const w of waiters.filter((x) => ev.rv >= x.rv)) w.done();
        }
      });
      const ended = new Promise<string>((res) => {
        r.on('end', () => res(buf === '' ? 'end' : `end with a partial line: ${buf}`));
        r.on('error', (e) => res(`error: ${(e as { code?: string }).code ?? e.message}`));
        r.on('aborted', () => res('aborted'));
        r.on('close', () => res('closed'));
      }).finally(() => agent.destroy());
      resolve({
        events,
        ended,
        until(target, timeoutMs = 15_000) {
          if (events.some((e) => e.rv >= target)) return Promise.resolve();
          return new Promise((res, rej) => {
            const t = setTimeout(
              () => rej(new Error(`watch did not reach resourceVersion ${target} in ${timeoutMs} ms (last ${events.at(-1)?.rv})`)),
              timeoutMs,
            );
            waiters.push({
              rv: target,
              done: () => {
                clearTimeout(t);
                res();
              },
            });
          });
        },
        close: () => {
          req.destroy();
          agent.destroy();
        },
      });
    });
    req.end();
  });
}
