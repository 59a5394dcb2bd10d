/**
 * Watch fan-out shares serialization: each change is encoded once per representation, however many watchers
 * receive it (the server counts encodings in website_apiserver_watch_event_encodings_total), and every watcher of
 * one representation gets byte-identical lines.
 */
import { request, type Agent } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminAgent, API, call, cleanupTempDirs, startServer, website, type ServerProcess } from './helpers/server-process.js';

let server: ServerProcess;
let agent: Agent;

beforeAll(async () => {
  server = await startServer();
  agent = adminAgent(server.certDir);
});
afterAll(async () => {
  await agent?.close();
  await server?.stop();
  cleanupTempDirs();
});

async function metric(name: string): Promise<number> {
  const text = (await call(agent, `${server.url}/metrics`)).text;
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`metric ${name} missing`);
  return Number(line.split(' ')[1]);
}

/** openWatch collects raw lines until `count` events arrived. */
async function openWatch(url: string, accept: string | undefined, count: number) {
  const res = await request(url, { dispatcher: agent, headers: accept ? { accept } : {} });
  expect(res.statusCode).toBe(200);
  const lines: string[] = [];
  let buf = '';
  const done = (async () => {
    for await (const chunk of res.body) {
      buf += chunk.toString();
      let i: number;
      while ((i = buf.indexOf('\n')) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
      if (lines.length >= count) break;
    }
    res.body.destroy();
  })();
  return { lines, done };
}

it('encodes each change once per representation for 30 watchers and sends every watcher identical lines', async () => {
  const changes = 40;
  const start = (await call(agent, `${server.url}${API}/websites`)).body.metadata.resourceVersion as string;
  const url = `${server.url}${API}/websites?watch=true&resourceVersion=${start}`;
  const table = 'application/json;as=Table;v=v1;g=meta.k8s.io';
  const json = await Promise.all(Array.from({ length: 20 }, () => openWatch(url, undefined, changes)));
  const tables = await Promise.all(Array.from({ length: 5 }, () => openWatch(url, table, changes)));
  const metadata = await Promise.all(Array.from({ length: 5 }, () => openWatch(url, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1', changes)));
  const encodedBefore = await metric('website_apiserver_watch_event_encodings_total');
  const sentBefore = await metric('apiserver_watch_events_total');

  for (let i = 0; i < changes; i++) {
    const r = await call(agent, `${server.url}${API}/namespaces/fan/websites`, 'POST', website(`f${i}`));
    expect(r.status).toBe(201);
  }
  await Promise.all([...json, ...tables, ...metadata].map((w) => w.done));

  const encoded = (await metric('website_apiserver_watch_event_encodings_total')) - encodedBefore;
  const sent = (await metric('apiserver_watch_events_total')) - sentBefore;
  expect(sent).toBeGreaterThanOrEqual(30 * changes);
  // One JSON, one Table and one PartialObjectMetadata encoding per change (the Tables' first event, with column
  // definitions, is one more variant shared by all five); per-watcher encoding would be 30 × 40 = 1200.
  expect(encoded).toBeLessThanOrEqual(3 * changes + 1);
  expect(encoded).toBeGreaterThanOrEqual(3 * changes);

  for (const w of json) expect(w.lines).toEqual(json[0]?.lines);
  for (const w of tables) expect(w.lines).toEqual(tables[0]?.lines);
  for (const w of metadata) expect(w.lines).toEqual(metadata[0]?.lines);
  expect(JSON.parse(metadata[0]?.lines[0] ?? '{}').object.kind).toBe('PartialObjectMetadata');
  const first = JSON.parse(tables[0]?.lines[0] ?? '{}');
  const second = JSON.parse(tables[0]?.lines[1] ?? '{}');
  expect(first.object.columnDefinitions.length).toBeGreaterThan(0);
  expect(second.object.columnDefinitions).toBeNull();
  expect(json[0]?.lines.map((l) => JSON.parse(l).object.metadata.name)).toEqual(Array.from({ length: changes }, (_, i) => `f${i}`));
});
