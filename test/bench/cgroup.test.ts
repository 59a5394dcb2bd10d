import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { locateMemoryHierarchy, openMemoryCgroup, parseKeyed, parseQuantity, wrapInCgroup, type MemoryCgroup } from './cgroup.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const fakeRoot = () => {
  const d = mkdtempSync(join(tmpdir(), 'bench-cgroup-'));
  dirs.push(d);
  return d;
};
const open = (name: string, limit: number, sys: { mounts: string; self: string }): MemoryCgroup => {
  const cg = openMemoryCgroup(name, limit, sys);
  if (typeof cg === 'string') throw new Error(cg);
  return cg;
};

describe('bench memory cgroup', () => {
  it('reads Kubernetes memory quantities as bytes', () => {
    expect(parseQuantity('512Mi')).toBe(512 * 2 ** 20);
    expect(parseQuantity('1.5Gi')).toBe(1.5 * 2 ** 30);
    expect(parseQuantity('600M')).toBe(600e6);
    expect(parseQuantity('1048576')).toBe(1048576);
    expect(parseQuantity('lots')).toBeNaN();
    expect(parseQuantity('5Mb')).toBeNaN();
  });

  it('reads the key-value lines of memory.stat and memory.events', () => {
    expect(parseKeyed('anon 4096\nfile 8192\n\nbogus\nname x\n')).toEqual({ anon: 4096, file: 8192 });
  });

  it('prefers cgroup v2 with a memory controller, else nests below its own cgroup in the v1 memory hierarchy', () => {
    const v2 = fakeRoot();
    const v1 = fakeRoot();
    mkdirSync(join(v1, 'jobs', 'me'), { recursive: true });
    const mounts = `cgroup2 ${v2} cgroup2 rw,relatime 0 0\ncgroup ${v1} cgroup rw,relatime,memory 0 0\n`;
    const self = '4:memory:/jobs/me\n0::/\n';
    writeFileSync(join(v2, 'cgroup.controllers'), 'cpu io memory pids\n');
    expect(locateMemoryHierarchy({ mounts, self })).toEqual({ version: 2, parent: v2 });
    writeFileSync(join(v2, 'cgroup.controllers'), 'hugetlb\n');
    expect(locateMemoryHierarchy({ mounts, self })).toEqual({ version: 1, parent: join(v1, 'jobs', 'me') });
    // Its own cgroup not visible (another cgroup namespace): the hierarchy's root.
    expect(locateMemoryHierarchy({ mounts, self: '4:memory:/elsewhere\n' })).toEqual({ version: 1, parent: v1 });
    expect(locateMemoryHierarchy({ mounts: `cgroup2 ${v2} cgroup2 rw 0 0\n`, self })).toMatch(/no memory controller/);
    expect(locateMemoryHierarchy({ mounts: 'proc /proc proc rw 0 0\n', self: '' })).toMatch(/no cgroup/);
  });

  it('v2: hands the memory controller down, limits the group without swap and reads its files', () => {
    const root = fakeRoot();
    writeFileSync(join(root, 'cgroup.controllers'), 'memory\n');
    writeFileSync(join(root, 'cgroup.subtree_control'), '');
    const cg = open('bench-1', 512 * 2 ** 20, { mounts: `cgroup2 ${root} cgroup2 rw 0 0\n`, self: '0::/\n' });
    expect(readFileSync(join(root, 'cgroup.subtree_control'), 'utf8')).toBe('+memory');
    expect(cg).toMatchObject({ version: 2, path: join(root, 'bench-1'), procs: join(root, 'bench-1', 'cgroup.procs') });
    expect(readFileSync(join(cg.path, 'memory.max'), 'utf8')).toBe(String(512 * 2 ** 20));
    writeFileSync(join(cg.path, 'memory.current'), '300\n');
    writeFileSync(join(cg.path, 'memory.events'), 'low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n');
    writeFileSync(join(cg.path, 'memory.stat'), 'anon 100\nfile 200\nfile_mapped 150\nshmem 0\n');
    expect(cg.read()).toEqual({ usage: 300, peak: undefined, oomKills: 1, limitHits: 7, anon: 100, file: 200, fileMapped: 150, shmem: 0 });
    writeFileSync(join(cg.path, 'memory.peak'), '400\n');
    expect(cg.read().peak).toBe(400);
  });

  it('v1: limits memory and reads rss, cache, the failcnts and oom_kill', () => {
    const root = fakeRoot();
    const sys = { mounts: `cgroup ${root} cgroup rw,memory 0 0\n`, self: '4:memory:/\n' };
    const cg = open('bench-2', 1000, sys);
    expect(readFileSync(join(cg.path, 'memory.limit_in_bytes'), 'utf8')).toBe('1000');
    writeFileSync(join(cg.path, 'memory.usage_in_bytes'), '900\n');
    writeFileSync(join(cg.path, 'memory.max_usage_in_bytes'), '1000\n');
    writeFileSync(join(cg.path, 'memory.failcnt'), '12\n');
    writeFileSync(join(cg.path, 'memory.memsw.failcnt'), '30\n');
    writeFileSync(join(cg.path, 'memory.oom_control'), 'oom_kill_disable 0\nunder_oom 0\noom_kill 0\n');
    writeFileSync(join(cg.path, 'memory.stat'), 'cache 600\nrss 300\nmapped_file 500\nshmem 0\ntotal_rss 300\n');
    expect(cg.read()).toEqual({ usage: 900, peak: 1000, oomKills: 0, limitHits: 42, anon: 300, file: 600, fileMapped: 500, shmem: 0 });
  });

  it('says why when the group cannot be made', () => {
    const root = fakeRoot();
    writeFileSync(join(root, 'cgroup.controllers'), 'memory\n');
    writeFileSync(join(root, 'cgroup.subtree_control'), 'memory\n');
    mkdirSync(join(root, 'taken'));
    expect(openMemoryCgroup('taken', 1000, { mounts: `cgroup2 ${root} cgroup2 rw 0 0\n`, self: '0::/\n' })).toMatch(/cannot create a memory cgroup.*EEXIST/);
  });

  it.runIf(process.platform === 'linux')('the wrapped command writes its own pid to cgroup.procs, then runs as that process', () => {
    const root = fakeRoot();
    const procs = join(root, 'cgroup.procs');
    const [bin, args] = wrapInCgroup({ procs } as MemoryCgroup, process.execPath, ['-e', 'process.stdout.write(String(process.pid))', 'a b']);
    const r = spawnSync(bin, args, { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(readFileSync(procs, 'utf8').trim()).toBe(r.stdout);
  });
});
