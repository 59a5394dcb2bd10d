/**
 * @module bench/cgroup
 * A memory cgroup of its own for a server the benchmark starts, limited as a container's memory limit would be
 * (`--memory-limit`, by default the StatefulSet's): created next to the benchmark, the server moved into it before
 * it execs Node.js, and read afterwards: how often the kernel's OOM killer ran in it, its peak, and what it holds by
 * kind (anonymous, file-backed). cgroup v2 (memory.max, memory.swap.max 0, memory.events, memory.peak) when its
 * hierarchy has the memory controller, else cgroup v1's memory hierarchy (memory.limit_in_bytes and
 * memory.memsw.limit_in_bytes, memory.oom_control, memory.max_usage_in_bytes), as a kubelet on either would set up.
 * Both count the page cache of files the processes read or write (lmdb's map) with their anonymous memory; the
 * kernel reclaims clean file pages when the group reaches its limit, and kills a process only when anonymous memory
 * (and what it cannot reclaim) does not fit.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const UNITS = /** @type {Record<string, number>} */ ({ '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 });

/**
 * parseQuantity reads a Kubernetes memory quantity (`512Mi`, `1Gi`, `600M`, `1048576`) as bytes; NaN if malformed.
 * @param {string} s
 */
export function parseQuantity(s) {
  const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)?$/.exec(s.trim());
  return m ? Math.round(Number(m[1]) * (UNITS[m[2] ?? ''] ?? NaN)) : NaN;
}

/**
 * parseKeyed reads the `key value` lines of memory.stat, memory.events and memory.oom_control.
 * @param {string} text
 * @returns {Record<string, number>}
 */
export function parseKeyed(text) {
  /** @type {Record<string, number>} */
  const out = {};
  for (const line of text.split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k && v !== undefined && /^\d+$/.test(v)) out[k] = Number(v);
  }
  return out;
}

/**
 * @typedef {object} CgroupSystem where the cgroup file systems are and which cgroup this process is in
 * @property {string} mounts the text of /proc/self/mounts
 * @property {string} self the text of /proc/self/cgroup
 */

/** @returns {CgroupSystem} */
function thisSystem() {
  const read = (/** @type {string} */ f) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  return { mounts: read('/proc/self/mounts'), self: read('/proc/self/cgroup') };
}

/**
 * locateMemoryHierarchy picks where a memory cgroup can be made: the cgroup v2 mount when its root offers the
 * memory controller, else below this process's own cgroup in the v1 memory hierarchy (so the limits above still
 * apply); a string says why neither can.
 * @param {CgroupSystem} sys
 * @returns {{version: 1 | 2, parent: string} | string}
 */
export function locateMemoryHierarchy(sys) {
  const mounts = sys.mounts
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.length >= 4);
  const v2 = mounts.find((f) => f[2] === 'cgroup2')?.[1];
  if (v2) {
    try {
      if (readFileSync(join(v2, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) return { version: 2, parent: v2 };
    } catch {
      // unreadable: try v1
    }
  }
  const v1 = mounts.find((f) => f[2] === 'cgroup' && (f[3] ?? '').split(',').includes('memory'))?.[1];
  if (!v1)
    return v2 ? `the cgroup v2 hierarchy at ${v2} has no memory controller and there is no cgroup v1 memory hierarchy` : 'no cgroup file system is mounted';
  // "4:memory:/some/path": this process's cgroup in that hierarchy, if its directory is visible.
  const own =
    sys.self
      .split('\n')
      .map((l) => l.split(':'))
      .find((f) => (f[1] ?? '').split(',').includes('memory'))?.[2] ?? '/';
  const parent = join(v1, own);
  return { version: 1, parent: existsSync(parent) ? parent : v1 };
}

/**
 * @typedef {object} CgroupMemory what a memory cgroup reports, in bytes
 * @property {number} usage memory.current (v2) / memory.usage_in_bytes (v1)
 * @property {number | undefined} peak memory.peak (v2, Linux 5.19+) / memory.max_usage_in_bytes (v1)
 * @property {number | undefined} oomKills processes the OOM killer ended in the group (undefined: not reported)
 * @property {number | undefined} limitHits times the group reached its limit (v2 memory.events `max`, v1 memory.failcnt
 * plus memory.memsw.failcnt)
 * @property {number} anon anonymous memory (memory.stat `anon` / v1 `rss`)
 * @property {number} file page cache, shmem included (memory.stat `file` / v1 `cache`)
 * @property {number} fileMapped of which mapped into a process (`file_mapped` / v1 `mapped_file`)
 * @property {number} shmem
 */

/**
 * @typedef {object} MemoryCgroup
 * @property {1 | 2} version
 * @property {string} path its directory
 * @property {number} limit bytes
 * @property {string} procs the cgroup.procs file a process writes its pid to, to move itself in
 * @property {() => CgroupMemory} read
 * @property {() => Promise<void>} remove removes the group once its processes have exited (a few tries, a
 * process just killed may still be leaving)
 */

/**
 * openMemoryCgroup makes a memory cgroup `name` limited to `limit` bytes, without swap; a string says why it
 * could not (not root, no memory controller).
 * @param {string} name
 * @param {number} limit
 * @param {CgroupSystem} [sys]
 * @returns {MemoryCgroup | string}
 */
export function openMemoryCgroup(name, limit, sys = thisSystem()) {
  const where = locateMemoryHierarchy(sys);
  if (typeof where === 'string') return where;
  const { version, parent } = where;
  const path = join(parent, name);
  const file = (/** @type {string} */ f) => join(path, f);
  const read = (/** @type {string} */ f) => readFileSync(file(f), 'utf8');
  const optional = (/** @type {string} */ f) => (existsSync(file(f)) ? read(f) : undefined);
  try {
    if (version === 2) {
      // The root's children get the memory controller only once the root hands it down.
      const subtree = readFileSync(join(parent, 'cgroup.subtree_control'), 'utf8').split(/\s+/);
      if (!subtree.includes('memory')) writeFileSync(join(parent, 'cgroup.subtree_control'), '+memory');
    }
    mkdirSync(path);
  } catch (e) {
    return `cannot create a memory cgroup in ${parent} (cgroup v${version}): ${e instanceof Error ? e.message : e}`;
  }
  try {
    if (version === 2) {
      writeFileSync(file('memory.max'), String(limit));
      if (existsSync(file('memory.swap.max'))) writeFileSync(file('memory.swap.max'), '0');
    } else {
      writeFileSync(file('memory.limit_in_bytes'), String(limit));
      // memory+swap no higher than memory: no swap (the file exists only with swap accounting on).
      if (existsSync(file('memory.memsw.limit_in_bytes'))) writeFileSync(file('memory.memsw.limit_in_bytes'), String(limit));
    }
  } catch (e) {
    rmdirSync(path);
    return `cannot limit the memory cgroup ${path}: ${e instanceof Error ? e.message : e}`;
  }
  return {
    version,
    path,
    limit,
    procs: file('cgroup.procs'),
    read: () => {
      const stat = parseKeyed(read('memory.stat'));
      if (version === 2) {
        const events = parseKeyed(read('memory.events'));
        const peak = optional('memory.peak');
        return {
          usage: Number(read('memory.current')),
          peak: peak === undefined ? undefined : Number(peak),
          oomKills: events.oom_kill,
          limitHits: events.max,
          anon: stat.anon ?? 0,
          file: stat.file ?? 0,
          fileMapped: stat.file_mapped ?? 0,
          shmem: stat.shmem ?? 0,
        };
      }
      const oom = parseKeyed(optional('memory.oom_control') ?? '');
      return {
        usage: Number(read('memory.usage_in_bytes')),
        peak: Number(read('memory.max_usage_in_bytes')),
        // Without swap memory+swap is charged first and fails first: its failcnt counts what memory's does not.
        oomKills: oom.oom_kill,
        limitHits: Number(read('memory.failcnt')) + Number(optional('memory.memsw.failcnt') ?? 0),
        anon: stat.rss ?? 0,
        file: stat.cache ?? 0,
        fileMapped: stat.mapped_file ?? 0,
        shmem: stat.shmem ?? 0,
      };
    },
    remove: async () => {
      for (let i = 0; ; i++) {
        try {
          rmdirSync(path);
          return;
        } catch (e) {
          if (i >= 50 || /** @type {NodeJS.ErrnoException} */ (e).code !== 'EBUSY') throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    },
  };
}

/**
 * wrapInCgroup is the command that runs `bin args` inside the group: a shell writes its own pid to cgroup.procs,
 * then execs the command, so the process (and every restart of it) is in the group from its first allocation.
 * @param {MemoryCgroup} cg
 * @param {string} bin
 * @param {string[]} args
 * @returns {[string, string[]]}
 */
export function wrapInCgroup(cg, bin, args) {
  return ['/bin/sh', ['-c', 'echo $$ > "$0" && exec "$@"', cg.procs, bin, ...args]];
}

/**
 * sampleMemory reads the group's anonymous and file-backed memory every `everyMs` and keeps the highest of each (the
 * kernel's peak counts both together); stop() ends the sampling and returns the maxima in bytes.
 * @param {MemoryCgroup} cg
 * @param {number} everyMs
 */
export function sampleMemory(cg, everyMs) {
  const max = { anon: 0, file: 0 };
  const take = () => {
    try {
      const m = cg.read();
      max.anon = Math.max(max.anon, m.anon);
      max.file = Math.max(max.file, m.file);
    } catch {
      // removed already
    }
  };
  take();
  const timer = setInterval(take, everyMs);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      take();
      return { ...max };
    },
  };
}
