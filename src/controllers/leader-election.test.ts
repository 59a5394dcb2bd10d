import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startLeaderElection, type LeaderElection, type LeaderElectionOptions } from './leader-election.js';
import { FakeClock } from './fake-clock.js';
import { startFakeLeases, type FakeLeases, type LeaseEndpoint, type Write } from '../../test/helpers/fake-leases.js';

// Timing is client-go's defaults (15 s / 10 s / 2 s) on a fake clock; candidates' jitter is off so the takeover
// bounds below are exact. Requests go over real HTTP to a fake apiserver, so the fake clock only moves once the
// clients have gone quiet (`run`).
const NS = 'website-system';
const NAME = 'website-apiserver';
const LEASE_MS = 15_000;
const DEADLINE_MS = 10_000;
const RETRY_MS = 2_000;
const MICRO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface Candidate {
  id: string;
  el: LeaderElection;
  ep: LeaseEndpoint;
  /** callbacks in order, with the fake time they ran at. */
  events: Array<{ what: 'started' | 'stopped'; at: number }>;
}

let fake: FakeLeases;
let clock: FakeClock;
let candidates: Candidate[];

beforeEach(async () => {
  fake = await startFakeLeases();
  clock = new FakeClock();
  candidates = [];
});

afterEach(async () => {
  for (const c of candidates) c.ep.mode = 'up';
  await Promise.all(candidates.map((c) => c.el.stop()));
  await fake.close();
});

async function candidate(id: string, extra: Partial<LeaderElectionOptions> = {}): Promise<Candidate> {
  const ep = await fake.endpoint();
  const events: Candidate['events'] = [];
  const el = startLeaderElection({
    kc: ep.kubeconfig,
    namespace: NS,
    name: NAME,
    identity: id,
    clock,
    jitterFactor: 0,
    onStartedLeading: () => events.push({ what: 'started', at: clock.now() }),
    onStoppedLeading: () => events.push({ what: 'stopped', at: clock.now() }),
    ...extra,
  });
  const c = { id, el, ep, events };
  candidates.push(c);
  return c;
}

const realPause = (ms: number) => new Promise((r) => setTimeout(r, ms));

// quiet waits (in real time) until the fake apiserver has seen no new request and answers nothing for a few ms.
async function quiet(): Promise<void> {
  let last = -1;
  let stable = 0;
  for (let i = 0; i < 1000 && stable < 3; i++) {
    await realPause(1);
    const n = fake.requestCount();
    stable = fake.busy() === 0 && n === last ? stable + 1 : 0;
    last = n;
  }
  if (stable < 3) throw new Error('the fake apiserver did not go quiet');
}

/** run moves the fake clock forward by `ms`, one due timer at a time, letting real I/O finish after each. */
async function run(ms: number): Promise<void> {
  const target = clock.now() + ms;
  await quiet();
  // A few timers per retry period are expected; thousands mean a busy loop, which must fail rather than spin.
  for (let fired = 0; ; fired++) {
    if (fired > 1000) throw new Error(`more than 1000 timers fell due within ${ms} ms: busy loop`);
    const next = clock.nextDue();
    if (next === undefined || next > target) break;
    clock.advance(Math.max(0, next - clock.now()));
    await quiet();
  }
  clock.advance(target - clock.now());
  await quiet();
}

const lease = () => fake.get(NS, NAME);
const leaders = () => candidates.filter((c) => c.el.isLeader()).map((c) => c.id);
const writesBy = (c: Candidate, method?: Write['method']) => fake.writes.filter((w) => w.endpoint === c.ep.index && (!method || w.method === method));
const renewMs = () => Date.parse(lease()?.spec?.renewTime ?? '');

describe('leader election over a Lease', () => {
  it('elects exactly one of two candidates, which keeps the lease by renewing it', async () => {
    const a = await candidate('a');
    const b = await candidate('b');
    await run(1_000);

    expect(leaders()).toHaveLength(1);
    const [leader, other] = a.el.isLeader() ? [a, b] : [b, a];
    expect(leader.events).toEqual([{ what: 'started', at: expect.any(Number) }]);
    expect(other.events).toEqual([]);
    expect(lease()?.spec).toMatchObject({ holderIdentity: leader.id, leaseDurationSeconds: 15, leaseTransitions: 0 });
    // Both raced to create the missing lease; whoever lost got AlreadyExists and did not lead.
    const posts = fake.writes.filter((w) => w.method === 'POST');
    expect(posts.filter((w) => w.code === 201)).toHaveLength(1);
    expect(posts.filter((w) => w.code !== 201).every((w) => w.code === 409)).toBe(true);
    const acquired = lease()?.spec?.acquireTime;

    await run(60_000);
    expect(leaders()).toEqual([leader.id]);
    expect(leader.events.map((e) => e.what)).toEqual(['started']);
    expect(other.events).toEqual([]);
    // Renewed every retry period; the acquire time stays; the other candidate never wrote after losing the create.
    expect(writesBy(leader, 'PUT').filter((w) => w.code === 200).length).toBeGreaterThanOrEqual(28);
    expect(clock.now() - renewMs()).toBeLessThanOrEqual(RETRY_MS);
    expect(lease()?.spec?.acquireTime).toBe(acquired);
    expect(writesBy(other, 'PUT')).toEqual([]);
  });

  it('stop() stops leading and releases the lease, so the other candidate takes over at its next retry', async () => {
    const a = await candidate('a');
    await run(100);
    expect(a.el.isLeader()).toBe(true);
    const b = await candidate('b');
    await run(5_000);
    expect(b.el.isLeader()).toBe(false);

    const stoppedAt = clock.now();
    await a.el.stop();
    expect(a.el.isLeader()).toBe(false);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped']);
    expect(lease()?.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });

    await run(RETRY_MS);
    expect(b.el.isLeader()).toBe(true);
    expect(b.events[0]!.at - stoppedAt).toBeLessThanOrEqual(RETRY_MS);
    expect(lease()?.spec).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });

    // A stopped elector stays silent.
    const before = fake.writes.length;
    await run(10_000);
    expect(fake.writes.slice(before).every((w) => w.endpoint === b.ep.index)).toBe(true);
  });

  it('stop() of a candidate writes nothing, calls no callback, and does not wait for a hung request', async () => {
    const a = await candidate('a');
    await run(100);
    const b = await candidate('b');
    b.ep.mode = 'hang';
    await run(RETRY_MS);
    const before = fake.writes.length;
    await b.el.stop(); // no clock advance: stop() itself must abort the hung request
    expect(b.events).toEqual([]);
    expect(fake.writes.length).toBe(before);
    expect(a.el.isLeader()).toBe(true);
  });

  it.each(['hang', 'reset'] as const)(
    'a leader cut off from the API (%s) stops within the renew deadline; the other takes over only after the lease duration',
    async (mode) => {
      const a = await candidate('a');
      await run(100);
      const b = await candidate('b');
      await run(5_000);
      expect(leaders()).toEqual(['a']);

      const lastRenewal = renewMs();
      a.ep.mode = mode;
      await run(30_000);

      const stopped = a.events.find((e) => e.what === 'stopped')!;
      const started = b.events.find((e) => e.what === 'started')!;
      expect(stopped).toBeDefined();
      expect(started).toBeDefined();
      // The leader gives up no later than retry period + renew deadline after its last good renewal ...
      expect(stopped.at - lastRenewal).toBeLessThanOrEqual(RETRY_MS + DEADLINE_MS);
      expect(stopped.at - lastRenewal).toBeGreaterThanOrEqual(DEADLINE_MS);
      // ... which is before anyone may consider the lease expired: no overlap.
      expect(started.at).toBeGreaterThan(stopped.at);
      expect(started.at - lastRenewal).toBeGreaterThanOrEqual(LEASE_MS);
      expect(started.at - lastRenewal).toBeLessThanOrEqual(LEASE_MS + RETRY_MS);
      expect(lease()?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });

      // Back online, the old leader is a candidate again and does not disturb the new one.
      a.ep.mode = 'up';
      await run(30_000);
      expect(leaders()).toEqual(['b']);
      expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped']);
      expect(b.events.map((e) => e.what)).toEqual(['started']);
    },
  );

  it('a renewal that gets 409 because someone else touched the Lease re-reads it and keeps leading', async () => {
    const a = await candidate('a');
    await run(100);
    const current = lease()!;
    fake.put({ ...current, metadata: { ...current.metadata, labels: { touched: 'yes' } } }); // same record, new resourceVersion
    const before = writesBy(a, 'PUT').length;
    await run(RETRY_MS);

    const puts = writesBy(a, 'PUT').slice(before);
    expect(puts.map((w) => w.code)).toEqual([409, 200]);
    expect(a.el.isLeader()).toBe(true);
    expect(a.events.map((e) => e.what)).toEqual(['started']);
    expect(lease()?.metadata.labels).toEqual({ touched: 'yes' }); // the update kept the other writer's metadata
    expect(renewMs()).toBeGreaterThan(Date.parse(current.spec!.renewTime!));
  });

  it('a renewal that gets 409 because another identity took the Lease stops leading at once', async () => {
    const a = await candidate('a');
    await run(100);
    const current = lease()!;
    const taken = clock.now();
    fake.put({ ...current, spec: { ...current.spec, holderIdentity: 'intruder', renewTime: '2025-01-01T00:00:00.100000Z' } });
    await run(RETRY_MS);
    expect(a.el.isLeader()).toBe(false);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped']);
    expect(a.events[1]!.at - taken).toBeLessThanOrEqual(RETRY_MS);

    // The intruder never renews: a takes the lease back once it has seen no change for the lease duration.
    const seen = a.events[1]!.at;
    await run(seen + LEASE_MS - 100 - clock.now());
    expect(a.el.isLeader()).toBe(false);
    await run(RETRY_MS + 100);
    expect(a.el.isLeader()).toBe(true);
    expect(a.events[2]!.at - seen).toBeGreaterThanOrEqual(LEASE_MS);
    expect(lease()?.spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: current.spec!.leaseTransitions! + 1 });
  });

  it.each([
    ['an hour in the past', -3_600_000],
    ['an hour in the future', 3_600_000],
  ])('judges expiry by the local time the record was seen to change, whatever its renewTime says (%s)', async (_, skew) => {
    const stamp = new Date(clock.now() + skew).toISOString().replace('Z', '456Z');
    fake.put({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: NAME, namespace: NS },
      spec: { holderIdentity: 'other', leaseDurationSeconds: 15, acquireTime: stamp, renewTime: stamp, leaseTransitions: 3 },
    });
    const seen = clock.now();
    const a = await candidate('a');
    await run(LEASE_MS - 100);
    expect(a.el.isLeader()).toBe(false);
    await run(RETRY_MS + 100);
    expect(a.el.isLeader()).toBe(true);
    expect(a.events[0]!.at - seen).toBeGreaterThanOrEqual(LEASE_MS);
    expect(lease()?.spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 4 });
  });

  it('writes acquireTime and renewTime with exactly six fractional digits', async () => {
    const a = await candidate('a');
    await run(5_000);
    await a.el.stop();
    const kinds = new Set(fake.writes.map((w) => `${w.method} ${w.code}`));
    expect(kinds).toEqual(new Set(['POST 201', 'PUT 200'])); // create, renewals, release: none rejected
    for (const w of fake.writes) {
      const spec = (JSON.parse(w.body) as { spec: Record<string, unknown> }).spec;
      expect(spec.acquireTime).toMatch(MICRO_TIME);
      expect(spec.renewTime).toMatch(MICRO_TIME);
    }
    // The released record carries the release time.
    expect(lease()?.spec?.renewTime).toBe(new Date(clock.now()).toISOString().replace('Z', '000Z'));
  });

  it('rejects timing that could let two leaders overlap', () => {
    const base = { kc: undefined as never, namespace: NS, name: NAME, identity: 'x', onStartedLeading: () => {}, onStoppedLeading: () => {} };
    expect(() => startLeaderElection({ ...base, leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(/greater than renewDeadlineMs/);
    expect(() => startLeaderElection({ ...base, leaseDurationMs: 15_500 })).toThrow(/whole seconds/);
    expect(() => startLeaderElection({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow(/jitterFactor × retryPeriodMs/);
  });
});
