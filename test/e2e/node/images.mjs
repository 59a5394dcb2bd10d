/**
 * @module e2e/node/images
 * The images the real node runs, built offline as OCI archives (scripts/image/oci.mjs) and cached by their inputs:
 *   pause             `build/pause/linux/pause.c` from the pinned Kubernetes module, `gcc -static`;
 *   nginx             `/usr/sbin/nginx` from Debian's nginx package (downloaded, unpacked, not installed) and our
 *                     config serving /usr/share/nginx/html on :80;
 *   git-sync          built from ../shared/third_party/git-sync-v4.4.0 (the module proxy refuses k8s.io/git-sync),
 *                     with git, its helper scripts and the tools they call, and ssh, as uid 65533;
 *   website-apiserver the same image `npm run image` writes.
 * Tags are never `latest`, so the kubelet never tries to pull them.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { writeOciArchive } from '../../../scripts/image/oci.mjs';
import { baseLayout, copyIn, copyWithLibraries, libraries } from '../../../scripts/image/rootfs.mjs';
import { buildProject, imageConfig, inputsHash, stageRootfs } from '../../../scripts/image/build-image.mjs';

/**
 * @typedef {object} Image
 * @property {string} ref
 * @property {string} archive
 */

const GIT_SYNC_VERSION = 'v4.4.0';
const GIT_SYNC_UID = 65533;

/** @param {...(string | Buffer)} parts */
const hash = (...parts) => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest('hex').slice(0, 12);
};
/** @param {string} cmd @param {string[]} args @param {object} [opts] */
const run = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });

/** treeHash hashes every file under dir (names and contents). */
function treeHash(/** @type {string} */ dir) {
  const h = createHash('sha256');
  const walk = (/** @type {string} */ d) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else h.update(relative(dir, p)).update(readFileSync(p));
    }
  };
  walk(dir);
  return h.digest('hex').slice(0, 12);
}

/**
 * cached returns the archive for (name, key), building it with `make(rootfs)` when it is not there yet.
 * @param {string} cacheDir
 * @param {string} name
 * @param {string} key
 * @param {string} ref
 * @param {import('../../../scripts/image/oci.mjs').ImageConfig} config
 * @param {(rootfs: string) => void} make
 * @param {(m: string) => void} log
 * @returns {Image}
 */
function cached(cacheDir, name, key, ref, config, make, log) {
  const archive = join(cacheDir, `${name}-${key}.oci.tar`);
  if (existsSync(archive)) return { ref, archive };
  const t = Date.now();
  const rootfs = mkdtempSync(join(tmpdir(), `e2e-image-${name}-`));
  try {
    make(rootfs);
    mkdirSync(cacheDir, { recursive: true });
    const { bytes } = writeOciArchive({ rootfs, config, ref, out: archive });
    log(`image ${ref}: ${(bytes / 1048576).toFixed(1)} MiB in ${Date.now() - t} ms`);
  } finally {
    rmSync(rootfs, { recursive: true, force: true });
  }
  return { ref, archive };
}

const NGINX_CONF = `# nginx for Website pods: serves the git-sync checkout that the pod's shared volume publishes as html/.
user nobody nogroup;
worker_processes 1;
daemon off;
pid /tmp/nginx.pid;
error_log /dev/stderr warn;
events { worker_connections 256; }
http {
  include /etc/nginx/mime.types;
  default_type application/octet-stream;
  access_log /dev/stdout;
  client_body_temp_path /tmp/client-body;
  proxy_temp_path /tmp/proxy;
  fastcgi_temp_path /tmp/fastcgi;
  uwsgi_temp_path /tmp/uwsgi;
  scgi_temp_path /tmp/scgi;
  server {
    listen 80;
    root /usr/share/nginx/html;
    index index.html;
  }
}
`;

/**
 * buildNodeImages builds (or finds in cacheDir) the four images.
 * @param {{cacheDir: string, kubernetesModuleDir: string, gitSyncSourceDir: string, log?: (m: string) => void}} o
 * @returns {Promise<{pause: Image, nginx: Image, gitSync: Image, websiteApiserver: Image}>}
 */
export async function buildNodeImages(o) {
  const log = o.log ?? (() => {});
  const { cacheDir } = o;

  const pauseSrc = join(o.kubernetesModuleDir, 'build', 'pause', 'linux', 'pause.c');
  const pause = cached(
    cacheDir,
    'pause',
    hash(readFileSync(pauseSrc), run('gcc', ['--version'])),
    'e2e.local/pause:3.10',
    { Entrypoint: ['/pause'], User: '65535:65535' },
    (rootfs) => {
      run('gcc', ['-Os', '-static', '-Wall', '-DVERSION=v3.10-e2e', '-o', join(rootfs, 'pause'), pauseSrc]);
    },
    log,
  );

  const nginxVersion = /Candidate:\s*(\S+)/.exec(run('apt-cache', ['policy', 'nginx']))?.[1] ?? 'unknown';
  const nginx = cached(
    cacheDir,
    'nginx',
    hash(nginxVersion, NGINX_CONF),
    `e2e.local/nginx:${nginxVersion.replace(/[^A-Za-z0-9_.-]/g, '_')}`,
    { Entrypoint: ['/usr/sbin/nginx', '-e', '/dev/stderr', '-c', '/etc/nginx/nginx.conf'], ExposedPorts: { '80/tcp': {} } },
    (rootfs) => {
      const debs = mkdtempSync(join(tmpdir(), 'e2e-nginx-debs-'));
      try {
        // Downloaded and unpacked only: nothing is installed on the machine.
        run('apt-get', ['download', `nginx=${nginxVersion}`, `nginx-common=${nginxVersion}`], { cwd: debs });
        const unpacked = join(debs, 'root');
        for (const deb of readdirSync(debs).filter((f) => f.endsWith('.deb'))) run('dpkg-deb', ['-x', join(debs, deb), unpacked]);
        mkdirSync(join(rootfs, 'usr', 'sbin'), { recursive: true });
        cpSync(join(unpacked, 'usr', 'sbin', 'nginx'), join(rootfs, 'usr', 'sbin', 'nginx'));
        for (const lib of libraries(join(unpacked, 'usr', 'sbin', 'nginx'))) copyIn(rootfs, lib);
        mkdirSync(join(rootfs, 'etc', 'nginx'), { recursive: true });
        cpSync(join(unpacked, 'etc', 'nginx', 'mime.types'), join(rootfs, 'etc', 'nginx', 'mime.types'));
        writeFileSync(join(rootfs, 'etc', 'nginx', 'nginx.conf'), NGINX_CONF);
        for (const d of ['var/log/nginx', 'var/lib/nginx', 'run', 'usr/share/nginx/html']) mkdirSync(join(rootfs, d), { recursive: true });
        baseLayout(rootfs, []);
      } finally {
        rmSync(debs, { recursive: true, force: true });
      }
    },
    log,
  );

  const gitVersion = run('git', ['--version']).trim();
  const gitSync = cached(
    cacheDir,
    'git-sync',
    hash(treeHash(o.gitSyncSourceDir), gitVersion, run('go', ['version'])),
    `e2e.local/git-sync:${GIT_SYNC_VERSION}`,
    {
      Entrypoint: ['/git-sync'],
      User: `${GIT_SYNC_UID}:${GIT_SYNC_UID}`,
      Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'HOME=/tmp'],
    },
    (rootfs) => {
      const src = mkdtempSync(join(tmpdir(), 'e2e-git-sync-src-'));
      try {
        cpSync(o.gitSyncSourceDir, src, { recursive: true });
        run('go', ['build', '-trimpath', '-ldflags', `-s -w -X k8s.io/git-sync/pkg/version.VERSION=${GIT_SYNC_VERSION}`, '-o', join(rootfs, 'git-sync'), '.'], {
          cwd: src,
          env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod', GONOSUMDB: '*', GOTOOLCHAIN: 'local' },
          stdio: ['ignore', 'pipe', 'inherit'],
        });
      } finally {
        rmSync(src, { recursive: true, force: true });
      }
      // git-sync v4.4.0 always runs `git submodule update`, a shell script in this git: git needs its helpers, a
      // shell and the small tools those scripts call. `cp -a` keeps git-core's many hard links to one file each.
      mkdirSync(join(rootfs, 'usr', 'lib'), { recursive: true });
      run('cp', ['-a', '/usr/lib/git-core', join(rootfs, 'usr', 'lib', 'git-core')]);
      if (existsSync('/usr/share/git-core/templates')) copyIn(rootfs, '/usr/share/git-core/templates');
      const tools = [
        'git',
        'sh',
        'dash',
        'sed',
        'grep',
        'basename',
        'dirname',
        'cat',
        'rm',
        'mkdir',
        'mv',
        'cp',
        'ln',
        'ls',
        'tr',
        'wc',
        'head',
        'tail',
        'sort',
        'uniq',
        'env',
        'expr',
        'printf',
        'test',
        'true',
        'false',
        'id',
        'uname',
        'sleep',
        'ssh',
      ];
      const paths = tools.map((t) => run('sh', ['-c', `command -v ${t}`]).trim()).filter((p) => p.startsWith('/'));
      const helpers = readdirSync('/usr/lib/git-core').map((f) => join('/usr/lib/git-core', f));
      copyWithLibraries(rootfs, [...paths, ...helpers.filter((h) => !h.endsWith('/mergetools'))]);
      if (!existsSync(join(rootfs, 'bin'))) symlinkSync('usr/bin', join(rootfs, 'bin'));
      baseLayout(rootfs, [{ name: 'git-sync', uid: GIT_SYNC_UID, home: '/tmp' }]);
    },
    log,
  );

  buildProject();
  const key = inputsHash();
  const websiteApiserver = cached(cacheDir, 'website-apiserver', key, `e2e.local/website-apiserver:${key}`, imageConfig(), stageRootfs, log);
  return { pause, nginx, gitSync, websiteApiserver };
}
