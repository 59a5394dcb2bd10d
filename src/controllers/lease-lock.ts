/**
 * @module controllers/lease-lock
 * The resource lock of leader election: one coordination.k8s.io/v1 Lease read and written through client-node's
 * CoordinationV1Api, in the shape of client-go's `resourcelock.LeaseLock`. leader-election.ts holds the state machine.
 *
 * ## Guarantees
 * - Every write is conditional on the resourceVersion of the Lease last read or written by this lock, so a concurrent
 *   writer makes it fail with 409 (`isConflict`) instead of being overwritten. A create that loses the race is a 409 too.
 * - `acquireTime` / `renewTime` go on the wire with exactly 6 fractional digits (client-node's `V1MicroTime`): the
 *   apiserver rejects the 3 digits of a plain `Date` (DEPENDENCIES.md §2).
 * - Every call takes an AbortSignal, so the elector can bound a request by its deadlines.
 * - Spec fields this lock does not manage (`strategy`, `preferredHolder`) and the metadata are kept on update.
 * ## Caveats
 * - Times in a `LeaderElectionRecord` are kept as the wire strings: the elector only compares records, it never trusts
 *   a remote timestamp (client-node types them `V1MicroTime` but hands them over as strings on read).
 */
import { CoordinationV1Api, Observable, V1MicroTime, type ConfigurationOptions, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { isConflict, isNotFound } from '../apis/meta/errors.js';

/** LeaderElectionRecord is the part of a Lease's spec that leader election reads and writes. */
export interface LeaderElectionRecord {
  /** holderIdentity is '' when nobody holds the lease (never acquired, or released). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  /** acquireTime and renewTime are MicroTime strings (RFC 3339, 6 fractional digits) or '' when absent. */
  acquireTime: string;
  renewTime: string;
  leaseTransitions: number;
}

/** ObservedRecord is a record as read, with a canonical text to tell whether it changed since the last read. */
export interface ObservedRecord {
  record: LeaderElectionRecord;
  raw: string;
}

/** microTime renders an instant (ms since the epoch) the way the apiserver wants a MicroTime. */
export function microTime(ms: number): string {
  return new V1MicroTime(ms).toISOString();
}

/** rawRecord is the canonical text of a record; two records are the same record iff their raw texts are equal. */
export function rawRecord(r: LeaderElectionRecord): string {
  return JSON.stringify([r.holderIdentity, r.leaseDurationSeconds, r.acquireTime, r.renewTime, r.leaseTransitions]);
}

export { isConflict };

// A value read back is a string; one this process wrote earlier may still be a Date. Either way keep the wire text.
function timeText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return microTime(v.getTime());
  return '';
}

function recordOf(lease: V1Lease): LeaderElectionRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: timeText(s.acquireTime),
    renewTime: timeText(s.renewTime),
    leaseTransitions: s.leaseTransitions ?? 0,
  };
}

// client-node's per-call options only take middleware; this one hands the request our AbortSignal.
function withSignal(signal: AbortSignal): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (ctx) => {
          ctx.setSignal(signal);
          return new Observable(Promise.resolve(ctx));
        },
        post: (res) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** LeaseLock reads and conditionally writes one Lease. */
export class LeaseLock {
  readonly #api: CoordinationV1Api;
  /** the Lease as last read or written; its resourceVersion guards the next update. */
  #lease: V1Lease | undefined;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
    readonly name: string,
  ) {
    this.#api = kc.makeApiClient(CoordinationV1Api);
  }

  /** describe names the lock for logs. */
  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** get reads the Lease; undefined when it does not exist. Other failures throw. */
  async get(signal: AbortSignal): Promise<ObservedRecord | undefined> {
    let lease: V1Lease;
    try {
      lease = await this.#api.readNamespacedLease({ name: this.name, namespace: this.namespace }, withSignal(signal));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    this.#lease = lease;
    const record = recordOf(lease);
    return { record, raw: rawRecord(record) };
  }

  /** create makes the Lease holding `r`; 409 when someone else created it first. */
  async create(r: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: this.#spec(r, undefined),
    };
    this.#lease = await this.#api.createNamespacedLease({ namespace: this.namespace, body }, withSignal(signal));
  }

  /** update replaces the spec with `r` if the Lease is still at the version last seen; 409 when it moved on. */
  async update(r: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const current = this.#lease;
    if (!current) throw new Error(`lease ${this.describe()} has not been read yet`);
    const body: V1Lease = { ...current, spec: this.#spec(r, current) };
    this.#lease = await this.#api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body }, withSignal(signal));
  }

  #spec(r: LeaderElectionRecord, current: V1Lease | undefined): V1Lease['spec'] {
    // MicroTime must be a V1MicroTime at serialization time (6 digits); parsing our own 6-digit text loses nothing
    // because we only ever write millisecond instants.
    const time = (t: string) => (t ? new V1MicroTime(t) : undefined);
    return {
      ...current?.spec,
      holderIdentity: r.holderIdentity,
      leaseDurationSeconds: r.leaseDurationSeconds,
      acquireTime: time(r.acquireTime),
      renewTime: time(r.renewTime),
      leaseTransitions: r.leaseTransitions,
    };
  }
}
