/**
 * @module controllers/leader-election
 * Leader election over a coordination.k8s.io/v1 Lease with the semantics of client-go's `tools/leaderelection`
 * (LeaseDuration 15 s, RenewDeadline 10 s, RetryPeriod 2 s). Entry point: `startLeaderElection(options)`; the caller
 * reconciles between `onStartedLeading` and `onStoppedLeading` and calls `stop()` on shutdown.
 *
 * ## Guarantees
 * - A candidate takes the Lease only when it is absent (create), released (empty holderIdentity), or expired: nobody
 *   changed its record for `leaseDurationSeconds` as measured on the *local* clock since this process last saw the
 *   record change. Remote `renewTime` is never compared with local time, so clock skew between nodes does not matter.
 * - Every write carries the resourceVersion last read; a 409 means another writer won, never an overwrite.
 * - While leading, the Lease is renewed every `retryPeriodMs`; when renewals keep failing for `renewDeadlineMs`
 *   (requests are aborted at that deadline) `onStoppedLeading` runs. The deadline ends at most
 *   `retryPeriodMs + renewDeadlineMs` after the last successful renewal, which is before any other candidate may
 *   consider the Lease expired (`leaseDurationMs` after it saw that renewal), so two leaders never overlap as long
 *   as clocks advance at about the same rate.
 * - A renewal that finds another identity holding the Lease stops leading at once (client-go keeps retrying until the
 *   deadline; there is nothing to gain from reconciling while someone else holds the Lease).
 * - After losing the Lease the process becomes a candidate again, so it can take over later without a restart.
 * - `stop()` ends the loop, runs `onStoppedLeading` if leading, then releases the Lease if this process holds it
 *   (holderIdentity '', leaseDurationSeconds 1, as client-go's ReleaseOnCancel) so another candidate takes over at its
 *   next retry instead of waiting for expiry.
 * - Callbacks run synchronously and strictly alternate: started, stopped, started, ...; a throwing callback is logged.
 * ## Caveats
 * - No fencing: a leader that is paused (e.g. a long GC pause or a frozen VM) longer than the lease duration may act
 *   briefly alongside its successor, as with client-go.
 * - `onStoppedLeading` is synchronous: work it starts to wind down is not awaited before the Lease is released.
 */
import { pino, type Logger } from 'pino';
import type { KubeConfig } from '@kubernetes/client-node';
import { realClock, type Clock, type Timer } from './clock.js';
import { isConflict, LeaseLock, microTime, rawRecord, type LeaderElectionRecord } from './lease-lock.js';

/** LEADER_ELECTION_DEFAULTS are client-go's (and controller-runtime's) defaults. */
export const LEADER_ELECTION_DEFAULTS = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  /** candidates wait retryPeriod × (1 + random × jitterFactor) between attempts, as client-go's JitterFactor. */
  jitterFactor: 1.2,
} as const;

export interface LeaderElectionOptions {
  kc: KubeConfig;
  /** namespace and name of the Lease. */
  namespace: string;
  name: string;
  /** identity written to holderIdentity; must be unique per process (e.g. pod name + random suffix). */
  identity: string;
  /** how long a Lease is honoured after its last observed change; whole seconds, as the Lease stores seconds. */
  leaseDurationMs?: number;
  /** how long the leader keeps retrying a failing renewal before it stops leading; < leaseDurationMs. */
  renewDeadlineMs?: number;
  /** pause between attempts (candidates, with jitter) and between renewals (leader). */
  retryPeriodMs?: number;
  /** 0 disables the candidates' jitter (tests). */
  jitterFactor?: number;
  clock?: Clock;
  logger?: Logger;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

export interface LeaderElection {
  /** isLeader is true between onStartedLeading and onStoppedLeading. */
  isLeader(): boolean;
  /** stop ends the election, stops leading and releases the Lease if held; resolves when done (same promise on
   * every call). */
  stop(): Promise<void>;
}

interface Timing {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  jitterFactor: number;
}

// The same rules as client-go's NewLeaderElector, plus whole seconds (a Lease cannot store a fraction).
function validate(t: Timing): void {
  const { leaseDurationMs: ld, renewDeadlineMs: rd, retryPeriodMs: rp, jitterFactor: jf } = t;
  if (!(ld > 0 && rd > 0 && rp > 0)) throw new Error('leader election: durations must be positive');
  if (ld % 1000 !== 0) throw new Error('leader election: leaseDurationMs must be whole seconds');
  if (ld <= rd) throw new Error('leader election: leaseDurationMs must be greater than renewDeadlineMs');
  if (!(jf >= 0)) throw new Error('leader election: jitterFactor must be >= 0');
  if (rd <= Math.max(1, jf) * rp) throw new Error('leader election: renewDeadlineMs must be greater than jitterFactor × retryPeriodMs');
}

/** startLeaderElection starts campaigning at once and keeps going until stop(). Throws on invalid timing. */
export function startLeaderElection(o: LeaderElectionOptions): LeaderElection {
  const timing: Timing = {
    leaseDurationMs: o.leaseDurationMs ?? LEADER_ELECTION_DEFAULTS.leaseDurationMs,
    renewDeadlineMs: o.renewDeadlineMs ?? LEADER_ELECTION_DEFAULTS.renewDeadlineMs,
    retryPeriodMs: o.retryPeriodMs ?? LEADER_ELECTION_DEFAULTS.retryPeriodMs,
    jitterFactor: o.jitterFactor ?? LEADER_ELECTION_DEFAULTS.jitterFactor,
  };
  validate(timing);
  const elector = new LeaderElector(o, timing);
  elector.start();
  return { isLeader: () => elector.leading, stop: () => elector.stop() };
}

type Attempt = 'ok' | 'failed' | 'held-by-other';

class LeaderElector {
  leading = false;
  readonly #o: LeaderElectionOptions;
  readonly #t: Timing;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #lock: LeaseLock;
  // What client-go calls observedRecord / observedRawRecord / observedTime: the record as last seen (read or
  // written) and the local time it was last seen to change. Expiry is judged only from these.
  #observed: LeaderElectionRecord | undefined;
  #observedRaw = '';
  #observedTime = 0;
  /** when the current renewal round gives up; meaningful while leading. */
  #renewDeadline = 0;
  #timer: Timer | undefined;
  /** aborts the request in flight (deadline or stop). */
  #inflight: AbortController | undefined;
  #loop: Promise<void> = Promise.resolve();
  #stopping: Promise<void> | undefined;

  constructor(o: LeaderElectionOptions, t: Timing) {
    this.#o = o;
    this.#t = t;
    this.#clock = o.clock ?? realClock;
    this.#log = (o.logger ?? pino({ level: 'silent' })).child({ subsystem: 'leader-election', lease: `${o.namespace}/${o.name}`, identity: o.identity });
    this.#lock = new LeaseLock(o.kc, o.namespace, o.name);
  }

  start(): void {
    this.#log.info('attempting to acquire leader lease');
    this.#schedule(0);
  }

  stop(): Promise<void> {
    this.#stopping ??= this.#shutdown();
    return this.#stopping;
  }

  async #shutdown(): Promise<void> {
    if (this.#timer) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#inflight?.abort(new Error('leader election stopped'));
    await this.#loop;
    if (this.leading) this.#stopLeading('leader election stopped');
    await this.#release();
  }

  #schedule(ms: number): void {
    if (this.#stopping) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#loop = this.#step();
    }, ms);
  }

  // One tick of the loop: an acquire attempt (candidate) or a renewal attempt (leader), then the next tick.
  async #step(): Promise<void> {
    if (this.#stopping) return;
    const t = this.#t;
    if (!this.leading) {
      const result = await this.#attempt(this.#clock.now() + t.renewDeadlineMs);
      if (this.#stopping) return;
      if (result === 'ok') {
        this.#startLeading();
        this.#schedule(t.retryPeriodMs);
      } else {
        this.#schedule(t.retryPeriodMs * (1 + Math.random() * t.jitterFactor));
      }
      return;
    }
    // A renewal round starts retryPeriod after the previous success and may retry until renewDeadline has passed
    // (client-go: wait.Until(PollImmediateUntil(RetryPeriod, ..., timeout RenewDeadline), RetryPeriod)).
    const deadline = this.#renewDeadline;
    const result = this.#clock.now() < deadline ? await this.#attempt(deadline) : 'failed';
    if (this.#stopping) return;
    const now = this.#clock.now();
    if (result === 'ok') {
      this.#renewDeadline = now + t.retryPeriodMs + t.renewDeadlineMs;
      this.#schedule(t.retryPeriodMs);
    } else if (result === 'held-by-other') {
      this.#stopLeading('the lease is held by another identity');
      this.#schedule(t.retryPeriodMs);
    } else if (now >= deadline) {
      this.#stopLeading(`failed to renew the lease for ${t.renewDeadlineMs} ms`);
      this.#schedule(0);
    } else {
      this.#schedule(Math.min(t.retryPeriodMs, deadline - now));
    }
  }

  #startLeading(): void {
    this.leading = true;
    this.#renewDeadline = this.#clock.now() + this.#t.retryPeriodMs + this.#t.renewDeadlineMs;
    this.#log.info('became leader');
    this.#callback('onStartedLeading', this.#o.onStartedLeading);
  }

  #stopLeading(reason: string): void {
    this.leading = false;
    this.#log.warn({ reason }, 'stopped leading');
    this.#callback('onStoppedLeading', this.#o.onStoppedLeading);
  }

  #callback(name: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.#log.error({ err: (err as Error)?.message ?? String(err) }, `${name} threw`);
    }
  }

  // Runs `fn` with an AbortSignal that fires at `deadline` on our clock (or on stop), so a hung request cannot
  // outlive the renew deadline.
  async #bounded<T>(deadline: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const ctl = new AbortController();
    this.#inflight = ctl;
    const timer = this.#clock.setTimeout(() => ctl.abort(new Error('deadline exceeded')), deadline - this.#clock.now());
    try {
      // Racing the abort as well: a fetch that ignores its signal must still not hold the loop past the deadline.
      const aborted = new Promise<never>((_, reject) => ctl.signal.addEventListener('abort', () => reject(ctl.signal.reason as Error), { once: true }));
      return await Promise.race([fn(ctl.signal), aborted]);
    } finally {
      this.#clock.clearTimeout(timer);
      if (this.#inflight === ctl) this.#inflight = undefined;
    }
  }

  async #attempt(deadline: number): Promise<Attempt> {
    try {
      return await this.#bounded(deadline, (signal) => this.#tryAcquireOrRenew(signal));
    } catch (err) {
      // A failing renewal matters (leadership is at stake); a candidate failing every retry period is just noise.
      const message = (err as Error)?.message ?? String(err);
      if (this.leading) this.#log.warn({ err: message }, 'failed to renew the lease');
      else this.#log.debug({ err: message }, 'failed to acquire the lease');
      return 'failed';
    }
  }

  #isLeaseValid(now: number): boolean {
    return this.#observedTime + (this.#observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  #heldByMe(): boolean {
    return this.#observed?.holderIdentity === this.#o.identity;
  }

  #setObserved(r: LeaderElectionRecord): void {
    this.#observed = r;
    this.#observedRaw = rawRecord(r);
    this.#observedTime = this.#clock.now();
  }

  // client-go's tryAcquireOrRenew: a fast path for the leader, then read → judge → create/update.
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<Attempt> {
    const now = this.#clock.now();
    const desired: LeaderElectionRecord = {
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: this.#t.leaseDurationMs / 1000,
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };

    // 1. The leader first writes on top of the version it wrote last; a 409 or error falls through to a fresh read.
    if (this.#observed && this.#heldByMe() && this.#isLeaseValid(now)) {
      const renewal = { ...desired, acquireTime: this.#observed.acquireTime, leaseTransitions: this.#observed.leaseTransitions };
      try {
        await this.#lock.update(renewal, signal);
        this.#setObserved(renewal);
        return 'ok';
      } catch (err) {
        if (signal.aborted) throw err;
        this.#log.debug({ err: (err as Error)?.message ?? String(err), conflict: isConflict(err) }, 'optimistic renewal failed; reading the lease');
      }
    }

    // 2. Read, or create when absent (a 409 here means another candidate created it first).
    const read = await this.#lock.get(signal);
    if (!read) {
      try {
        await this.#lock.create(desired, signal);
      } catch (err) {
        if (isConflict(err)) return 'failed';
        throw err;
      }
      this.#setObserved(desired);
      return 'ok';
    }

    // 3. Expiry is measured from when we saw the record change, not from its renewTime.
    if (read.raw !== this.#observedRaw) this.#setObserved(read.record);
    const other = read.record.holderIdentity !== '' && read.record.holderIdentity !== this.#o.identity;
    if (other && this.#isLeaseValid(now)) return this.leading ? 'held-by-other' : 'failed';

    // 4. Take over (a transition) or keep our own lease.
    const next = this.#heldByMe()
      ? { ...desired, acquireTime: read.record.acquireTime, leaseTransitions: read.record.leaseTransitions }
      : { ...desired, leaseTransitions: read.record.leaseTransitions + 1 };
    try {
      await this.#lock.update(next, signal);
    } catch (err) {
      if (isConflict(err)) return 'failed';
      throw err;
    }
    this.#setObserved(next);
    return 'ok';
  }

  // client-go's release(): only if the last record seen names us; a failure just leaves the lease to expire.
  async #release(): Promise<void> {
    if (!this.#observed || !this.#heldByMe()) return;
    const now = microTime(this.#clock.now());
    const released: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: this.#observed.leaseTransitions,
    };
    try {
      await this.#bounded(this.#clock.now() + this.#t.renewDeadlineMs, (signal) => this.#lock.update(released, signal));
      this.#setObserved(released);
      this.#log.info('released the lease');
    } catch (err) {
      this.#log.warn({ err: (err as Error)?.message ?? String(err) }, 'failed to release the lease; it expires on its own');
    }
  }
}
