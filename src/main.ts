#!/usr/bin/env node
/**
 * @module main
 * Entry point: `version` (and --version) prints the version, the `backup` and `restore` subcommands (cmd/backup),
 * `migrate` (cmd/migrate: a CRD's objects moved here or back),
 * else the server: parse flags, run, and on SIGTERM/SIGINT shut down as kube-apiserver does
 * (server/graceful-shutdown.ts: stop accepting, end watches, answer the requests begun, flush the store) and exit 0;
 * exit 1 if that outlives its flags' bound (shutdownDeadlineMs).
 * Exit codes: 2 for a bad command line (one line per problem and a hint to --help), 1 for a start that failed (one
 * line when the operator can act on it, cmd/start-failure.ts; a stack otherwise).
 */
import { resolve } from 'node:path';
import { parseOptions, usage, USAGE_HINT } from './cmd/options.js';
import { shutdownDeadlineMs } from './server/graceful-shutdown.js';
import { versionLine } from './util/build-info.js';

const command = process.argv[2];
if (command === 'backup' || command === 'restore') {
  const { runDataCommand } = await import('./cmd/backup.js');
  const code = await runDataCommand(command, process.argv.slice(3), process.env);
  // A backup to `-` may still be draining into a pipe: exit once stdout has taken everything.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}
if (command === 'migrate') {
  const { runMigrate } = await import('./cmd/migrate.js');
  process.exit(await runMigrate(process.argv.slice(3), process.env));
}
if (command === 'version' && process.argv.length === 3) {
  process.stdout.write(`${versionLine()}\n`);
  process.exit(0);
}

const parsed = parseOptions(process.argv.slice(2), process.env, { stdoutIsTTY: process.stdout.isTTY === true });
if (parsed.kind === 'help') {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}
if (parsed.kind === 'version') {
  process.stdout.write(`${versionLine()}\n`);
  process.exit(0);
}
if (parsed.kind === 'error') {
  process.stderr.write(`${parsed.errors.map((e) => `website-apiserver: ${e}\n`).join('')}${USAGE_HINT}\n`);
  process.exit(2);
}

// shellWord quotes a path for a POSIX shell when it needs it.
const shellWord = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

const { checkTlsFiles, startFailureMessage } = await import('./cmd/start-failure.js');
try {
  checkTlsFiles(parsed.options);
  const { run } = await import('./cmd/run.js');
  const running = await run(parsed.options);
  // What to do next, as the last line of the start: kubectl with the admin kubeconfig (certificates/self-signed.ts).
  const kubeconfig = resolve(parsed.options.certDir, 'kubeconfig');
  // (In text its path is the message already; JSON has it as a field too.)
  const next = `to use it: export KUBECONFIG=${shellWord(kubeconfig)}`;
  if (parsed.options.logFormat === 'text') running.server.app.log.info(next);
  else running.server.app.log.info({ kubeconfig }, next);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const o = parsed.options;
    const deadline = shutdownDeadlineMs({
      delayMs: o.shutdownDelayMs,
      watchGraceMs: o.shutdownWatchTerminationGracePeriodMs,
      drainTimeoutMs: o.requestTimeoutMs,
    });
    running.server.app.log.info({ signal, deadlineMs: deadline }, 'shutting down');
    setTimeout(() => {
      running.server.app.log.error({ deadlineMs: deadline }, 'shutdown did not finish in time');
      process.exit(1);
    }, deadline).unref();
    running.stop().then(
      (report) => {
        running.server.app.log.info(report, 'shut down');
        process.exit(0);
      },
      (e: unknown) => {
        running.server.app.log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} catch (e) {
  // An operator's error (the port in use, an unreadable file, the data dir in use...) is its one line; anything else comes with its stack.
  const message = (await startFailureMessage(e, parsed.options).catch(() => undefined)) ?? (e instanceof Error && e.stack ? e.stack : String(e));
  process.stderr.write(`website-apiserver: ${message}\n`);
  process.exit(1);
}
