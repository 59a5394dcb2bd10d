/**
 * @module scripts/image/rootfs
 * Fills an image's root file system from this machine's own files (which Debian's packages installed): a binary
 * with every shared library `ldd` names for it, users and groups, empty folders. What the images need is small, so
 * copying from the host beats unpacking whole packages.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, existsSync, lstatSync, mkdirSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * libraries lists the absolute paths of the shared libraries (and the loader) a dynamic ELF file needs; none for a
 * static one or a script.
 * @param {string} file
 * @returns {string[]}
 */
export function libraries(file) {
  let out = '';
  try {
    out = execFileSync('ldd', [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return []; // "not a dynamic executable"
  }
  const libs = [];
  for (const line of out.split('\n')) {
    if (/not found/.test(line)) throw new Error(`${file} needs a library this machine lacks: ${line.trim()}`);
    const m = /=>\s*(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  return libs;
}

/**
 * copyIn copies a host path to the same path under rootfs, recreating a symlink as a symlink (and copying its
 * target too), so `/bin/sh -> dash` and library version links keep working.
 * @param {string} rootfs
 * @param {string} path absolute host path
 */
export function copyIn(rootfs, path) {
  const dest = join(rootfs, path);
  if (existsSync(dest) || isLink(dest)) return;
  mkdirSync(dirname(dest), { recursive: true });
  const st = lstatSync(path);
  if (st.isSymbolicLink()) {
    const target = readlinkSync(path);
    symlinkSync(target, dest);
    copyIn(rootfs, target.startsWith('/') ? target : join(dirname(path), target));
  } else if (st.isDirectory()) {
    cpSync(path, dest, { recursive: true, verbatimSymlinks: true });
  } else {
    copyFileSync(path, dest);
    chmodSync(dest, st.mode & 0o7777);
  }
}

/** @param {string} p */
function isLink(p) {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * copyWithLibraries copies each file and the shared libraries each one needs into rootfs.
 * @param {string} rootfs
 * @param {string[]} files absolute host paths of executables (or shared objects)
 */
export function copyWithLibraries(rootfs, files) {
  const libs = new Set();
  for (const f of files) {
    copyIn(rootfs, f);
    for (const l of libraries(realpathSync(f))) libs.add(l);
  }
  for (const l of libs) copyIn(rootfs, l);
}

/**
 * baseLayout writes /etc/passwd and /etc/group with root, nobody and the given users, and /tmp (1777).
 * @param {string} rootfs
 * @param {{name: string, uid: number, home?: string}[]} users
 */
export function baseLayout(rootfs, users) {
  mkdirSync(join(rootfs, 'etc'), { recursive: true });
  const all = [{ name: 'root', uid: 0, home: '/root' }, ...users, { name: 'nobody', uid: 65534, home: '/nonexistent' }];
  writeFileSync(
    join(rootfs, 'etc', 'passwd'),
    all.map((u) => `${u.name}:x:${u.uid}:${u.uid === 65534 ? 65534 : u.uid}:${u.name}:${u.home ?? '/tmp'}:/sbin/nologin\n`).join(''),
  );
  writeFileSync(
    join(rootfs, 'etc', 'group'),
    [...all.filter((u) => u.uid !== 65534), { name: 'nogroup', uid: 65534 }].map((u) => `${u.name}:x:${u.uid}:\n`).join(''),
  );
  mkdirSync(join(rootfs, 'tmp'), { recursive: true });
  chmodSync(join(rootfs, 'tmp'), 0o1777);
  if (existsSync('/etc/ssl/certs/ca-certificates.crt')) copyIn(rootfs, '/etc/ssl/certs/ca-certificates.crt');
}
