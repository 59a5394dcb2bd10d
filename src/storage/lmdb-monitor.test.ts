import { describe, expect, it } from 'vitest';
import { monitorStore, type MonitoredStore } from './lmdb-monitor.js';

// A store whose state the test sets: the monitor's job is only what it logs, and when.
function fakeStore() {
  const state = { readable: true, fault: undefined as string | undefined, held: 1 };
  const store: MonitoredStore = {
    readable: () => state.readable,
    get readFault() {
      return state.fault;
    },
    readers: () => ({ held: state.held, active: 1, max: 126, oldestLag: 0 }),
  };
  return { state, store };
}

describe('monitorStore', () => {
  it('logs once when reads start failing and once when they work again, and the same for crowded reader slots', () => {
    const { state, store } = fakeStore();
    const lines: [string, string][] = [];
    const log = {
      error: (_: object, m: string) => lines.push(['error', m]),
      warn: (_: object, m: string) => lines.push(['warn', m]),
      info: (_: object, m: string) => lines.push(['info', m]),
    };
    const m = monitorStore(store, log, { dataDir: '/d' }, 60_000);
    expect(lines).toEqual([]);
    state.readable = false;
    state.fault = 'MDB_READERS_FULL: Environment maxreaders limit reached';
    state.held = 126;
    m.check();
    m.check();
    state.readable = true;
    state.held = 3;
    m.check();
    m.stop();
    expect(lines.map(([level]) => level)).toEqual(['error', 'warn', 'info', 'info']);
    expect(lines[0]?.[1]).toMatch(/^storage cannot serve reads/);
    expect(lines[1]?.[1]).toMatch(/^lmdb reader slots nearly exhausted: 126 of 126 held/);
  });
});
