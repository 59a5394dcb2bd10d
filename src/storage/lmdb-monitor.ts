/**
 * @module storage/lmdb-monitor
 * The log lines that say what is wrong with the embedded store's reads before a client has to guess: a read that
 * cannot be served (every reader slot held, a fatal environment), and reader slots running out. Checked on a timer
 * and told once per episode (a line when it starts, one when it ends), so a broken store does not flood the log.
 */
import type { ReaderSlots } from './lmdb-read.js';

/** MonitoredStore is what the monitor reads (LmdbStorage). */
export interface MonitoredStore {
  readable(): boolean;
  readonly readFault: string | undefined;
  readers(): ReaderSlots;
}

/** StoreLog is where the lines go (a pino logger fits). */
export interface StoreLog {
  error(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
  info(fields: object, msg: string): void;
}

/** Past this share of the reader slots held, the log says so. */
const READERS_WARN = 0.8;

/** monitorStore checks the store every `everyMs` and once at once; stop() ends it. */
export function monitorStore(store: MonitoredStore, log: StoreLog, fields: object, everyMs = 5000): { stop(): void; check(): void } {
  let unreadable = false;
  let crowded = false;
  const check = () => {
    const readable = store.readable();
    if (!readable && !unreadable)
      log.error(
        { ...fields, fault: store.readFault },
        'storage cannot serve reads: requests answer 500 and /readyz fails (storage-read) until a read succeeds',
      );
    else if (readable && unreadable) log.info(fields, 'storage serves reads again');
    unreadable = !readable;
    let slots: ReaderSlots;
    try {
      slots = store.readers();
    } catch {
      return;
    }
    const full = slots.held >= Math.floor(slots.max * READERS_WARN);
    if (full && !crowded) {
      log.warn(
        { ...fields, ...slots },
        `lmdb reader slots nearly exhausted: ${slots.held} of ${slots.max} held (a read transaction left open, or many processes reading the store); reads fail with MDB_READERS_FULL once all are`,
      );
    } else if (!full && crowded) log.info({ ...fields, ...slots }, 'lmdb reader slots back to normal');
    crowded = full;
  };
  const timer = setInterval(check, everyMs);
  timer.unref();
  check();
  return { stop: () => clearInterval(timer), check };
}
