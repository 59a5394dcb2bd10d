#!/usr/bin/env node
/**
 * @module scripts/image/build-image
 * `npm run image -- [--out FILE] [--tag REF]`: the offline equivalent of the Containerfile. Builds the project,
 * installs its production dependencies, and writes an OCI image archive holding them under /app with this
 * machine's Node.js (from its Debian package) and the shared libraries it and the native addons need, running as
 * uid/gid 65532 with `node dist/main.js`. No container engine or registry is needed; load it with
 * `ctr -n k8s.io images import FILE` (or `podman load -i FILE`).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { writeOciArchive } from './oci.mjs';
import { baseLayout, copyIn, copyWithLibraries, libraries } from './rootfs.mjs';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** UID is the fixed non-root user the manifests run as (runAsUser 65532). */
export const UID = 65532;
const PORT = 8443;

/** files lists every file under dir, sorted, as paths relative to it. */
function files(/** @type {string} */ dir) {
  /** @type {string[]} */
  const out = [];
  const walk = (/** @type {string} */ d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

/**
 * inputsHash is a short hash of what the image is made of: dist/, the lock file and the Node.js binary.
 * @returns {string}
 */
export function inputsHash() {
  const h = createHash('sha256');
  for (const f of files(join(ROOT, 'dist'))) h.update(f).update(readFileSync(join(ROOT, 'dist', f)));
  h.update(readFileSync(join(ROOT, 'package-lock.json')));
  h.update(`${process.execPath} ${process.version} ${statSync(process.execPath).size}`);
  return h.digest('hex').slice(0, 12);
}

/** build runs `npm run build` through build-if-needed (a no-op when dist/ is current). */
export function buildProject() {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build-if-needed.mjs')], { cwd: ROOT, stdio: 'inherit' });
}

/**
 * stageRootfs fills `rootfs` with the server: /app (dist, package files, production node_modules), node and its
 * libraries, users, /data and /tmp.
 * @param {string} rootfs
 */
export function stageRootfs(rootfs) {
  const app = join(rootfs, 'app');
  mkdirSync(app, { recursive: true });
  cpSync(join(ROOT, 'dist'), join(app, 'dist'), { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, f), join(app, f));
  // Production dependencies only, from the lock file, exactly as the Containerfile's `npm ci --omit=dev`.
  execFileSync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: app, stdio: ['ignore', 'ignore', 'inherit'] });
  rmSync(join(app, 'node_modules', '.package-lock.json'), { force: true });
  const addons = files(join(app, 'node_modules'))
    .filter((f) => f.endsWith('.node') && !f.includes('musl'))
    .map((f) => join(app, 'node_modules', f));
  copyWithLibraries(rootfs, [process.execPath]);
  // The addons' libraries (libstdc++ and the like) are looked up on the host and copied to the same paths.
  for (const addon of addons) for (const lib of libraries(addon)) copyIn(rootfs, lib);
  // /usr/bin/node is where the Containerfile's base has it too (via PATH).
  if (!existsSync(join(rootfs, 'usr', 'bin', 'node'))) throw new Error('node was not copied into the image');
  baseLayout(rootfs, [{ name: 'website-apiserver', uid: UID, home: '/tmp' }]);
  mkdirSync(join(rootfs, 'data'), { recursive: true });
}

/** imageConfig is the runtime config, the same as the Containerfile's. */
export const imageConfig = () => ({
  User: `${UID}:${UID}`,
  WorkingDir: '/app',
  Entrypoint: ['node', 'dist/main.js'],
  // A container must listen beyond its own loopback; certificates it generates go to /tmp (the root is read-only).
  Cmd: ['--bind-address=0.0.0.0', '--data-dir=/data', '--cert-dir=/tmp/certs'],
  Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'NODE_ENV=production'],
  ExposedPorts: { [`${PORT}/tcp`]: {} },
  Volumes: { '/data': {} },
  Labels: { 'org.opencontainers.image.title': 'website-apiserver', 'org.opencontainers.image.source': 'website-apiserver' },
});

/**
 * buildImage builds the project and writes the image archive.
 * @param {{out: string, tag: string}} o
 * @returns {{ref: string, archive: string, bytes: number}}
 */
export function buildImage(o) {
  buildProject();
  const rootfs = mkdtempSync(join(tmpdir(), 'website-apiserver-rootfs-'));
  try {
    stageRootfs(rootfs);
    const { bytes } = writeOciArchive({ rootfs, config: imageConfig(), ref: o.tag, out: o.out });
    return { ref: o.tag, archive: o.out, bytes };
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { out: { type: 'string' }, tag: { type: 'string' }, help: { type: 'boolean' } } });
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  if (values.help) {
    process.stdout.write(
      `Usage: npm run image -- [--out FILE] [--tag REF]\n  --out  archive path (default .cache/images/website-apiserver.oci.tar)\n  --tag  image reference (default website-apiserver:${version})\n`,
    );
    process.exit(0);
  }
  const t = Date.now();
  const r = buildImage({
    out: resolve(values.out ?? join(ROOT, '.cache', 'images', 'website-apiserver.oci.tar')),
    tag: values.tag ?? `website-apiserver:${version}`,
  });
  process.stdout.write(
    `${r.archive}\n${r.ref} (${(r.bytes / 1048576).toFixed(1)} MiB, ${((Date.now() - t) / 1000).toFixed(1)} s)\n` +
      `load it with: ctr -n k8s.io images import ${relative(process.cwd(), r.archive) || r.archive}\n`,
  );
}
