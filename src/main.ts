#!/usr/bin/env node
/**
 * @module main
 * Entry point: parse flags, run, and on SIGTERM/SIGINT close watches, stop accepting, flush the store and exit 0
 * (forced exit with 1 if that takes longer than 5 s).
 */
import { run } from './cmd/run.js';
import { parseOptions, usage } from './cmd/options.js';

const SHUTDOWN_TIMEOUT_MS = 5000;

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
    running.server.app.log.info({ signal }, 'shutting down');
    setTimeout(() => process.exit(1), SHUTDOWN_TIMEOUT_MS).unref();
    running.stop().then(
      () => process.exit(0),
      (e: unknown) => {
        running.server.app.log.error({ err: e }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
} catch (e) {
  process.stderr.write(`website-apiserver: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
}
