#!/usr/bin/env node
/**
 * @module main
 * Entry point: the `backup` and `restore` subcommands (cmd/backup), else the server: parse flags, run, and on
 * SIGTERM/SIGINT shut down as kube-apiserver does (server/graceful-shutdown.ts: stop accepting, end watches, answer
 * the requests begun, flush the store) and exit 0; exit 1 if that outlives its flags' bound (shutdownDeadlineMs).
 */
import { run } from './cmd/run.js';
import { parseOptions, usage } from './cmd/options.js';
import { CrdRefused } from './kinds/crd/index.js';
import { shutdownDeadlineMs } from './server/graceful-shutdown.js';
import { DataDirInUse } from './storage/data-dir-lock.js';
import { StoreDamaged } from './storage/lmdb-integrity.js';

const command = process.argv[2];
if (command === 'backup' || command === 'restore') {
  const { runDataCommand } = await import('./cmd/backup.js');
  const code = await runDataCommand(command, process.argv.slice(3), process.env);
  // A backup to `-` may still be draining into a pipe: exit once stdout has taken everything.
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  process.exit(code);
}

const parsed = parseOptions(process.argv.slice(2), process.env);
if (parsed.kind === 'help') {
  process.stdout.write(`${usage()}\n`);
  process.exit(0);
}
if (parsed.kind === 'error') {
  process.stderr.write(`${parsed.errors.join('\n')}\n\n${usage()}\n`);
  process.exit(2);
}

try {
  const running = await run(parsed.options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    const o = parsed.options;
    const deadline = shutdownDeadlineMs({ delayMs: o.shutdownDelayMs, watchGraceMs: o.shutdownWatchTerminationGracePeriodMs, drainTimeoutMs: o.requestTimeoutMs });
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
  // An operator's error (the data dir in use, a damaged store, a CRD refused) is its one line; anything else comes with its stack.
  const message = e instanceof DataDirInUse || e instanceof StoreDamaged || e instanceof CrdRefused ? e.message : ((e as Error).stack ?? String(e));
  process.stderr.write(`website-apiserver: ${message}\n`);
  process.exit(1);
}
