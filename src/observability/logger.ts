/**
 * @module observability/logger
 * The root pino logger on stdout, level from --log-level, format from --log-format: `json` lines for a log collector,
 * or `text` for a person at a terminal (pino-pretty, loaded only then). Both write synchronously, so the lines of a
 * process that exits right after logging are all out.
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import type { PrettyOptions } from 'pino-pretty';

/** LOG_LEVELS are the accepted --log-level values. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** LOG_FORMATS are the accepted --log-format values. */
export const LOG_FORMATS = ['text', 'json'] as const;
/** LogFormat is one of LOG_FORMATS. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** TEXT_OPTIONS are pino-pretty's settings for --log-format=text: one line a record, local time, no pid or host. */
export const TEXT_OPTIONS: PrettyOptions = {
  singleLine: true,
  translateTime: 'SYS:HH:MM:ss.l',
  ignore: 'pid,hostname,component',
};

/**
 * textDestination turns pino's JSON lines into pino-pretty's text, written synchronously to `fd`. Not pino-pretty's own
 * stream (a Transform piped to its destination, whose last lines a process.exit can cut) and not a worker transport:
 * its prettyFactory formats each line in the write itself.
 */
export function textDestination(fd = 1, colorize?: boolean): DestinationStream {
  const require = createRequire(import.meta.url);
  const { prettyFactory } = require('pino-pretty') as typeof import('pino-pretty');
  const pretty = prettyFactory({ ...TEXT_OPTIONS, ...(colorize === undefined ? {} : { colorize }) });
  const out = pino.destination({ dest: fd, sync: true });
  return { write: (line: string) => void out.write(pretty(line)) };
}

/** createLogger returns the process logger. */
export function createLogger(level: string, format: LogFormat = 'json'): Logger {
  const options = { level, base: { component: 'website-apiserver' }, timestamp: pino.stdTimeFunctions.isoTime };
  return format === 'text' ? pino(options, textDestination()) : pino(options);
}
