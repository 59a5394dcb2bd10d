/**
 * @module observability/logger
 * The root pino logger: structured JSON lines on stdout, level from --log-level.
 */
import { pino, type Logger } from 'pino';

/** LOG_LEVELS are the accepted --log-level values. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** createLogger returns the process logger. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { component: 'website-apiserver' }, timestamp: pino.stdTimeFunctions.isoTime });
}
