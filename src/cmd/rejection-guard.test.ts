import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// A child process like the server's (dist/, built by npm test's pretest): Node's default ends it on the first
// unhandled rejection, the guard keeps it serving and logs the rejection.
const GUARD = resolve(import.meta.dirname, '../../dist/cmd/rejection-guard.js');
const LOGGER = resolve(import.meta.dirname, '../../dist/observability/logger.js');

function runChild(install: boolean, rejection: string): { status: number | null; out: string } {
  const script = `
    const { installRejectionGuard } = await import(${JSON.stringify(GUARD)});
    const { createLogger } = await import(${JSON.stringify(LOGGER)});
    if (${install}) installRejectionGuard(createLogger('debug'));
    ${rejection};
    await new Promise((r) => setTimeout(r, 100));
    process.stdout.write('still serving\\n');
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  return { status: r.status, out: r.stdout + r.stderr };
}

describe('installRejectionGuard', () => {
  it('without it, one unhandled rejection ends the process (the failure the guard exists for)', () => {
    const r = runChild(false, `Promise.reject(new Error('boom'))`);
    expect(r.status).toBe(1);
    expect(r.out).not.toContain('still serving');
  });

  it('logs an unknown rejection as an error named unhandledRejection and keeps the process running', () => {
    const r = runChild(true, `Promise.reject(new Error('boom'))`);
    expect(r.status).toBe(0);
    expect(r.out).toContain('still serving');
    const line = r.out.split('\n').find((l) => l.includes('unhandledRejection'));
    expect(line).toBeDefined();
    const entry = JSON.parse(line as string) as { level: number; err: { message: string } };
    expect(entry.level).toBe(50);
    expect(entry.err.message).toBe('boom');
  });

  it('takes an lmdb commit failure (its writes were answered) quietly, at debug, and handles its commitError', () => {
    const r = runChild(
      true,
      `
      const cause = Object.assign(new Error('No space left on device'), { code: 28 });
      Promise.reject(Object.assign(new Error('Commit failed (see commitError for details)'), { commitError: Promise.reject(cause) }))`,
    );
    expect(r.status).toBe(0);
    expect(r.out).toContain('still serving');
    expect(r.out).not.toContain('unhandledRejection');
    expect(r.out).toContain('lmdb commit failure already answered to its writes');
  });
});
