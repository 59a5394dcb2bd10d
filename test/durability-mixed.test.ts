/**
 * Durability under SIGKILL with creates, updates (merge patches) and deletes mixed, and watches resumed across the
 * crash, as client-go's reflector does it. Every write commits its object, its revision and its history entry in one
 * lmdb transaction and is answered (and sent to watchers) only once flushed, so after a restart:
 * - each acknowledged write is there, as acknowledged; a write cut off by the kill is either wholly there or not;
 * - revisions are contiguous: a watch from X sees revisions X+1..R, each exactly once, in order, no gap;
 * - what a watcher got before the crash is a prefix of that history (nothing was sent that did not persist), and
 *   resuming from the last revision it got completes it;
 * - folding that history over the state at X gives exactly the final list.
 */
import { describe, expect, it } from 'vitest';
import type { Agent } from 'undici';
import { API, call, serversPerTest, website, type ServerProcess } from './helpers/server-process.js';
import { openWatch, type WatchedEvent } from './helpers/watch-client.js';

const COLLECTION = `${API}/namespaces/default/websites`;
const WRITERS = 8;
const CYCLES = 3;

const start = serversPerTest();

/** State maps each website to its spec.replicas. */
type State = Map<string, number>;

/** Write is one request a writer made: what it asked, and what became of it. */
interface Write {
  op: 'create' | 'patch' | 'delete';
  name: string;
  replicas?: number;
  /** The revision the answer carried (a delete answers a Status without one). */
  rv?: number;
  /** The status of the answer; undefined when the kill cut the request off before an answer. */
  status?: number;
}

async function list(srv: ServerProcess, agent: Agent): Promise<{ state: State; rv: number }> {
  const res = await call(agent, `${srv.url}${COLLECTION}`);
  expect(res.status).toBe(200);
  const items = res.body.items as { metadata: { name: string }; spec: { replicas: number } }[];
  return { state: new Map(items.map((i) => [i.metadata.name, i.spec.replicas])), rv: Number(res.body.metadata.resourceVersion) };
}

/** hammer runs WRITERS loops of create → patch → (delete | patch) on fresh names until the process dies. */
async function hammer(srv: ServerProcess, agent: Agent, prefix: string, killAfterAcks: number, killAfterMs = 4000): Promise<Write[]> {
  const writes: Write[] = [];
  let acks = 0;
  let dead = false;
  srv.proc.once('exit', () => (dead = true));
  const timer = setTimeout(() => srv.proc.kill('SIGKILL'), killAfterMs);
  const loop = async (w: number) => {
    for (let k = 0; !dead; k++) {
      const name = `${prefix}-w${w}-${k}`;
      const plan: Write[] = [
        { op: 'create', name, replicas: 1 },
        { op: 'patch', name, replicas: 2 + (k % 7) },
        k % 2 === 0 ? { op: 'delete', name } : { op: 'patch', name, replicas: 10 + (k % 5) },
      ];
      for (const step of plan) {
        writes.push(step);
        try {
          const url = step.op === 'create' ? `${srv.url}${COLLECTION}` : `${srv.url}${COLLECTION}/${name}`;
          const res =
            step.op === 'create'
              ? await call(agent, url, 'POST', website(name, { replicas: step.replicas }))
              : step.op === 'patch'
                ? await call(agent, url, 'PATCH', JSON.stringify({ spec: { replicas: step.replicas } }), { 'content-type': 'application/merge-patch+json' })
                : await call(agent, url, 'DELETE');
          step.status = res.status;
          expect([200, 201]).toContain(res.status);
          if (step.op !== 'delete') step.rv = Number(res.body.metadata.resourceVersion);
          if (++acks === killAfterAcks) srv.proc.kill('SIGKILL');
        } catch {
          // Cut off by the kill: this is the last write on this name.
          break;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, (_, i) => loop(i)));
  clearTimeout(timer);
  expect(srv.proc.signalCode).toBe('SIGKILL');
  return writes;
}

/** fold applies watch events to a state. */
function fold(from: State, events: WatchedEvent[]): State {
  const s = new Map(from);
  for (const e of events) {
    if (e.type === 'DELETED') s.delete(e.name);
    else if (e.type === 'ADDED' || e.type === 'MODIFIED') s.set(e.name, e.replicas as number);
  }
  return s;
}

describe('durability with creates, updates and deletes across SIGKILL, and watches resumed across it', () => {
  it(`keeps every acknowledged write and a gapless, duplicate-free history a resumed watch replays, ${CYCLES} kill -9 cycles`, async () => {
    let { srv, agent } = await start();
    const { dataDir, certDir } = srv;
    const figures: string[] = [];
    // A watch from resourceVersion 0 starts from the current state; from 1 on it replays history.
    expect((await call(agent, `${srv.url}${COLLECTION}`, 'POST', website('seed'))).status).toBe(201);
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      const { state: atX, rv: X } = await list(srv, agent);
      const before = await openWatch(srv, COLLECTION, X);
      const t0 = Date.now();
      // Killed after a number of acknowledgements that varies by cycle; the last cycle at an arbitrary moment.
      const writes =
        cycle < CYCLES
          ? await hammer(srv, agent, `c${cycle}`, 150 + cycle * 97)
          : await hammer(srv, agent, `c${cycle}`, Infinity, 300 + Math.floor(Math.random() * 300));
      const elapsed = Date.now() - t0;
      const cutOffWatch = await before.ended;
      const acked = writes.filter((w) => w.status !== undefined);
      const cutOff = writes.filter((w) => w.status === undefined);
      expect(acked.length).toBeGreaterThan(20);

      ({ srv, agent } = await start({ dataDir, certDir }));
      const { state: final, rv: R } = await list(srv, agent);

      // The watcher that was cut off resumes from the last revision it got, as a reflector does; one that had
      // stopped reading halfway resumes from there.
      const last = before.events.at(-1)?.rv ?? X;
      const resumed = await openWatch(srv, COLLECTION, last);
      if (R > last) await resumed.until(R);
      const half = before.events[before.events.length >> 1]?.rv ?? X;
      const fromHalf = await openWatch(srv, COLLECTION, half);
      if (R > half) await fromHalf.until(R);
      fromHalf.close();
      // A new watcher from X gets the whole history since X.
      const fromX = await openWatch(srv, COLLECTION, X);
      if (R > X) await fromX.until(R);
      resumed.close();
      fromX.close();

      const rvs = fromX.events.map((e) => e.rv);
      // Exactly once, in order, no gap: one revision per write, and the store has no other writer.
      expect(rvs).toEqual(Array.from({ length: R - X }, (_, i) => X + 1 + i));
      // What was sent before the crash persisted, exactly as sent; resuming completes it without gap or repeat.
      expect(before.events).toEqual(fromX.events.slice(0, before.events.length));
      expect([...before.events, ...resumed.events]).toEqual(fromX.events);
      expect(fromHalf.events).toEqual(fromX.events.filter((e) => e.rv > half));
      // The history folded over the state at X is the final state.
      expect(fold(atX, fromX.events)).toEqual(final);

      // Each acknowledged write is in the history as acknowledged (a delete: a DELETED event for its name).
      const byRv = new Map(fromX.events.map((e) => [e.rv, e]));
      const deleted = new Map(fromX.events.filter((e) => e.type === 'DELETED').map((e) => [e.name, e.rv]));
      const missing = acked.filter((w) => {
        if (w.op === 'delete') return !deleted.has(w.name);
        const e = byRv.get(w.rv as number);
        return !e || e.name !== w.name || e.type !== (w.op === 'create' ? 'ADDED' : 'MODIFIED') || e.replicas !== w.replicas;
      });
      expect(missing).toEqual([]);
      // Every change in the history is one the writers asked for: acknowledged, or cut off by the kill (the last
      // write on its name). The acknowledged writes' latest state per name survives unless a cut-off write followed.
      const ackedRvs = new Set([...acked.map((w) => w.rv), ...acked.filter((w) => w.op === 'delete').map((w) => deleted.get(w.name))]);
      const unacked = fromX.events.filter((e) => !ackedRvs.has(e.rv));
      expect(unacked.length).toBeLessThanOrEqual(cutOff.length);
      for (const e of unacked) expect(cutOff.some((w) => w.name === e.name)).toBe(true);
      const lastAcked = new Map<string, Write>();
      for (const w of acked) lastAcked.set(w.name, w);
      const wrong = [...lastAcked.values()]
        .filter((w) => !cutOff.some((c) => c.name === w.name))
        .filter((w) => (w.op === 'delete' ? final.has(w.name) : final.get(w.name) !== w.replicas));
      expect(wrong).toEqual([]);

      figures.push(
        `cycle ${cycle}: ${acked.length} acknowledged writes (${acked.filter((w) => w.op === 'create').length} creates, ` +
          `${acked.filter((w) => w.op === 'patch').length} patches, ${acked.filter((w) => w.op === 'delete').length} deletes) in ${elapsed} ms, ` +
          `${cutOff.length} cut off (${unacked.length} of them committed), history ${X + 1}..${R}; the watch before the kill got ` +
          `${before.events.length} events (${cutOffWatch}), resumed from ${last} got ${resumed.events.length}, from ${half} got ${fromHalf.events.length}`,
      );
    }
    console.log(`kill -9 durability with updates, deletes and resumed watches:\n  ${figures.join('\n  ')}`);
  });
});
