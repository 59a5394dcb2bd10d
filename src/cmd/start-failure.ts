/**
 * @module cmd/start-failure
 * The one line an operator reads when the server cannot start for a reason of theirs: the port taken, a file a flag
 * names unreadable, the data dir in use, a damaged store, a CRD refused, an invalid --tls-san or audit policy. main.ts prints it on stderr and exits 1; an
 * error not recognized here is a bug, printed with its stack.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Options } from './options.js';

/** StartFailure is an operator's error that the message alone explains. */
export class StartFailure extends Error {}

// The fields Node sets on a failed system call (listen, open, read).
interface SystemError extends Error {
  code?: string;
  syscall?: string;
  path?: string;
  address?: string;
  port?: number;
}

// What a file's error code means for a person.
const FILE_REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'it is a directory, not a file',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space left on the device',
  EMFILE: 'too many open files',
};

// hostPort spells an address and port as a client dials it (`[::1]:8443`).
const hostPort = (address: string | undefined, port: number | undefined) => `${address?.includes(':') ? `[${address}]` : (address ?? '')}:${port ?? ''}`;

// listenFailure explains an error of listen(2) on --bind-address and --port.
function listenFailure(e: SystemError, o: Pick<Options, 'bindAddress' | 'port'>): string | undefined {
  const where = hostPort(e.address ?? o.bindAddress, e.port ?? o.port);
  switch (e.code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the address is already in use (another website-apiserver, or another program: \`ss -ltnp\` shows which); stop it, or choose another port with --port (--port 0 picks a free one)`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: ${e.address ?? o.bindAddress} is not an address of this machine; choose another with --bind-address (0.0.0.0 for all interfaces)`;
    case 'EACCES':
    case 'EPERM':
      return `cannot listen on ${where}: permission denied${(e.port ?? o.port) < 1024 ? ' (a port below 1024 needs privileges)' : ''}; choose another port with --port`;
    default:
      return undefined;
  }
}

// The flags that name files or directories the start reads or writes, most specific first.
function pathFlags(o: Options): [flag: string, path: string | undefined][] {
  return [
    ['--tls-cert-file', o.tlsCertFile],
    ['--tls-private-key-file', o.tlsPrivateKeyFile],
    ['--audit-policy-file', o.auditPolicyFile],
    ['--audit-log-path', o.auditLogPath],
    ['--etcd-cafile', o.etcdCaFile],
    ['--etcd-certfile', o.etcdCertFile],
    ['--etcd-keyfile', o.etcdKeyFile],
    ['--cert-dir', o.certDir],
    ['--data-dir', o.dataDir],
    ...o.crdPaths.map((p): [string, string] => ['--crd', p]),
  ];
}

// fileFailure explains a file system error on a path one of the flags names (the path itself, or one inside a directory flag).
function fileFailure(e: SystemError, o: Options): string | undefined {
  if (!e.path || !e.code) return undefined;
  const failed = e.path;
  const inside = (dir: string) => {
    const r = relative(dir, failed);
    return r === '' || (!r.startsWith('..') && !r.startsWith('/'));
  };
  const match = pathFlags(o).find(([, p]) => p !== undefined && (p === failed || inside(p)));
  if (!match) return undefined;
  const [flag, path] = match;
  const reason = FILE_REASONS[e.code] ?? e.code;
  return `${flag} ${path}: cannot ${e.syscall ?? 'use'} ${failed === path ? 'it' : failed}: ${reason} (${e.code})`;
}

/**
 * startFailureMessage is the one line explaining why the start failed, or undefined when the error is not an operator's
 * (then the stack is what helps). The modules of the errors it knows are loaded only now: a start that succeeds may
 * not need them all.
 */
export async function startFailureMessage(e: unknown, o: Options): Promise<string | undefined> {
  const [{ InvalidSan }, { CrdRefused }, { PolicyError }, { DataDirInUse }, { StoreDamaged }] = await Promise.all([
    import('../certs/self-signed.js'),
    import('../kinds/crd/index.js'),
    import('../observability/audit-policy.js'),
    import('../storage/data-dir-lock.js'),
    import('../storage/lmdb-integrity.js'),
  ]);
  if (e instanceof StartFailure || e instanceof DataDirInUse || e instanceof StoreDamaged || e instanceof CrdRefused) return e.message;
  // A --tls-san that is no name, an --audit-policy-file kube would refuse (kube's message).
  if (e instanceof InvalidSan) return `--tls-san: ${e.message}`;
  if (e instanceof PolicyError) return `--audit-policy-file: ${e.message}`;
  if (!(e instanceof Error)) return undefined;
  const sys = e as SystemError;
  if (sys.syscall === 'listen' || sys.syscall === 'bind') return listenFailure(sys, o);
  return fileFailure(sys, o);
}

/**
 * checkTlsFiles reads --tls-cert-file and --tls-private-key-file before anything starts, so a missing, unreadable or
 * malformed one, or a key of another certificate, is a StartFailure naming the file rather than a stack from deep in
 * the start.
 */
export function checkTlsFiles(o: Pick<Options, 'tlsCertFile' | 'tlsPrivateKeyFile'>): void {
  if (!o.tlsCertFile || !o.tlsPrivateKeyFile) return;
  const load = <T>(flag: string, path: string, parse: (pem: string) => T, what: string): T => {
    let pem: string;
    try {
      pem = readFileSync(path, 'utf8');
    } catch (e) {
      const code = (e as SystemError).code ?? '';
      throw new StartFailure(`${flag} ${path}: cannot read it: ${FILE_REASONS[code] ?? (e as Error).message}${code ? ` (${code})` : ''}`);
    }
    try {
      return parse(pem);
    } catch (e) {
      throw new StartFailure(`${flag} ${path}: not ${what}: ${oneLine((e as Error).message)}`);
    }
  };
  const cert = load('--tls-cert-file', o.tlsCertFile, (pem) => new X509Certificate(pem), 'a PEM certificate');
  const key = load('--tls-private-key-file', o.tlsPrivateKeyFile, (pem) => createPrivateKey(pem), 'a PEM private key');
  if (!cert.checkPrivateKey(key))
    throw new StartFailure(`--tls-private-key-file ${o.tlsPrivateKeyFile} is not the private key of --tls-cert-file ${o.tlsCertFile}`);
}

// oneLine keeps an OpenSSL message to its first line.
const oneLine = (text: string) => text.split('\n')[0]?.trim() ?? '';
