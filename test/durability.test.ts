/**
 * Durability of the lmdb store as a client sees it: an acknowledged write survives a SIGKILL, and the revision
 * counter never goes backwards across restarts (no resourceVersion is handed out twice).
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { API, call, serversPerTest, tempDir, website, type ServerProcess } from './helpers/server-process.js';

const COLLECTION = `${API}/namespaces/default/websites`;
const CLIENTS = 8;
const KILL_AFTER_MS = 1500;
const KILL_AFTER_ACKS = 300;
const MIN_ACKS = 21;

const start = serversPerTest();

/** Ack is one create the server answered 201 to. */
interface Ack {
  name: string;
  rv: number;
}

/** KillCycle is what one hammer-then-SIGKILL run observed. */
interface KillCycle {
  acks: Ack[];
  /** failures counts requests that did not get a 201 (in flight at the kill, or refused). */
  failures: number;
  non201: number[];
}

/**
 * hammerAndKill runs CLIENTS loops that create websites as fast as the server answers, and SIGKILLs the
 * process after killAfterAcks acknowledged creates, or killAfterMs after the MIN_ACKS-th one, whichever comes first.
 * The timer starts only then so that a loaded machine still gives the kill some writes in flight to lose.
 */
async function hammerAndKill(
  srv: ServerProcess,
  agent: Agent,
  prefix: string,
  killAfterMs = KILL_AFTER_MS,
  killAfterAcks = KILL_AFTER_ACKS,
): Promise<KillCycle> {
  const acks: Ack[] = [];
  const non201: number[] = [];
  let failures = 0;
  let killed = false;
  let seq = 0;
  const kill = () => {
    if (killed) return;
    killed = true;
    srv.proc.kill('SIGKILL');
  };
  let timer: NodeJS.Timeout | undefined;
  // Whatever happens, the loops end (the assertions below then say what went wrong).
  const guard = setTimeout(kill, 60_000);
  const loop = async (client: number) => {
    while (!killed) {
      const name = `${prefix}-c${client}-${seq++}`;
      try {
        const res = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(name));
        if (res.status === 201) {
          acks.push({ name, rv: Number(res.body.metadata.resourceVersion) });
          if (acks.length === MIN_ACKS) timer = setTimeout(kill, killAfterMs);
          if (acks.length >= killAfterAcks) kill();
        } else {
          failures++;
          non201.push(res.status);
        }
      } catch {
        failures++; // connection reset by the kill
      }
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, i) => loop(i)));
  clearTimeout(timer);
  clearTimeout(guard);
  await new Promise<void>((res) => {
    if (srv.proc.exitCode !== null || srv.proc.signalCode !== null) res();
    else srv.proc.once('exit', () => res());
  });
  expect(srv.proc.signalCode).toBe('SIGKILL');
  return { acks, failures, non201 };
}

/** listAll returns name → resourceVersion of every website in the default namespace, and the list's resourceVersion. */
async function listAll(srv: ServerProcess, agent: Agent): Promise<{ names: Map<string, number>; rv: number }> {
  const res = await call(agent, `${srv.url}${COLLECTION}`);
  expect(res.status).toBe(200);
  const items = res.body.items as { metadata: { name: string; resourceVersion: string } }[];
  return {
    names: new Map(items.map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)])),
    rv: Number(res.body.metadata.resourceVersion),
  };
}

describe('durability across process death', () => {
  it('keeps every acknowledged create and never reuses a resourceVersion when SIGKILLed under 8 concurrent writers, twice in a row', async () => {
    let { srv, agent } = await start();
    const { dataDir, certDir } = srv;
    const allAcks: Ack[] = [];
    const figures: string[] = [];
    for (let cycle = 1; cycle <= 2; cycle++) {
      const t0 = Date.now();
      // Cycle 1 kills right after the 300th acknowledgement; cycle 2 at an arbitrary moment on a timer
      // (150-300 ms after the 21st).
      const { acks, failures, non201 } =
        cycle === 1
          ? await hammerAndKill(srv, agent, `kill${cycle}`)
          : await hammerAndKill(srv, agent, `kill${cycle}`, 150 + Math.floor(Math.random() * 150), Infinity);
      const elapsed = Date.now() - t0;
      // Only connection errors from the kill are expected, never an HTTP error status.
      expect(non201).toEqual([]);
      expect(acks.length).toBeGreaterThanOrEqual(MIN_ACKS);
      allAcks.push(...acks);

      // Every acknowledged create had its own resourceVersion.
      const rvs = allAcks.map((a) => a.rv);
      expect(new Set(rvs).size).toBe(rvs.length);

      ({ srv, agent } = await start({ dataDir, certDir }));
      const { names, rv: listRv } = await listAll(srv, agent);
      const missing = allAcks.filter((a) => !names.has(a.name)).map((a) => a.name);
      expect(missing).toEqual([]);
      // Each survived exactly as acknowledged, with the resourceVersion the client was told.
      const changed = allAcks.filter((a) => names.get(a.name) !== a.rv).map((a) => `${a.name}: acked ${a.rv}, stored ${names.get(a.name)}`);
      expect(changed).toEqual([]);
      const maxAck = Math.max(...rvs);
      expect(listRv).toBeGreaterThanOrEqual(maxAck);

      // The counter resumed past every handed-out revision.
      const fresh = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website(`after-kill-${cycle}`));
      expect(fresh.status).toBe(201);
      const freshRv = Number(fresh.body.metadata.resourceVersion);
      expect(freshRv).toBeGreaterThan(maxAck);
      expect(freshRv).toBeGreaterThan(listRv);
      allAcks.push({ name: `after-kill-${cycle}`, rv: freshRv });
      figures.push(
        `cycle ${cycle}: ${acks.length} acknowledged creates in ${elapsed} ms, ${failures} requests cut off, ` +
          `${names.size} objects after restart, list rv ${listRv}, next rv ${freshRv}`,
      );
    }
    console.log(`kill -9 durability:\n  ${figures.join('\n  ')}`);
  });

  it('keeps objects, their uid and resourceVersion, and the revision counter across a graceful SIGTERM restart, in a data dir whose name has a dot', async () => {
    // lmdb-js takes a path with an extension for a database file unless told otherwise.
    const { srv, agent } = await start({ dataDir: join(tempDir('ws-parent-'), 'website.data') });
    const a = await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('keep-me', { replicas: 2 }));
    expect(a.status).toBe(201);
    // A deleted object advances the counter past every stored object's resourceVersion.
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('short-lived'))).status).toBe(201);
    expect((await call(agent, `${srv.url}${COLLECTION}/short-lived`, 'DELETE')).status).toBe(200);
    const before = await listAll(srv, agent);
    expect(before.rv).toBeGreaterThan(Number(a.body.metadata.resourceVersion));

    expect(await srv.stop('SIGTERM')).toBe(0);
    expect(statSync(srv.dataDir).isDirectory()).toBe(true);
    expect(existsSync(join(srv.dataDir, 'data.mdb'))).toBe(true);

    const { srv: srv2, agent: agent2 } = await start({ dataDir: srv.dataDir, certDir: srv.certDir });
    const got = await call(agent2, `${srv2.url}${COLLECTION}/keep-me`);
    expect(got.status).toBe(200);
    expect(got.body.metadata.uid).toBe(a.body.metadata.uid);
    expect(got.body.metadata.resourceVersion).toBe(a.body.metadata.resourceVersion);
    expect(got.body.metadata.creationTimestamp).toBe(a.body.metadata.creationTimestamp);
    expect(got.body.spec).toEqual(a.body.spec);
    expect((await call(agent2, `${srv2.url}${COLLECTION}/short-lived`)).status).toBe(404);

    const after = await listAll(srv2, agent2);
    expect(after.rv).toBe(before.rv);
    expect([...after.names.keys()]).toEqual(['keep-me']);

    const next = await call(agent2, `${srv2.url}${COLLECTION}`, 'POST', website('next'));
    expect(next.status).toBe(201);
    expect(Number(next.body.metadata.resourceVersion)).toBeGreaterThan(before.rv);
  });
});
