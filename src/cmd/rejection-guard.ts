/**
 * @module cmd/rejection-guard
 * The process-level net for promise rejections nobody handled. Node's default (`--unhandled-rejections=throw`)
 * ends the process on the first one; an API server must not go down for one stray promise while every request
 * it serves is answered from its own awaited chain.
 *
 * Why keeping on serving is safe: a write is acknowledged only after the request handler awaited the storage's
 * commit promise and it resolved. A rejection that reaches this handler was by definition awaited by no request,
 * so it cannot have turned into an acknowledgement, and the storage's state is decided by lmdb's transactions,
 * not by this process staying up. The known case (a failed lmdb commit seen through a promise of lmdb's own:
 * storage/lmdb-faults guardBatchStart) is quiet; anything else is logged as an error with the message
 * `unhandledRejection`, which test/disk-full.test.ts looks for. Synchronous uncaught exceptions keep Node's
 * default (the process state is unknown after one).
 */
import type { Logger } from 'pino';
import { isCommitFault } from '../storage/lmdb-faults.js';

let installed = false;

/** installRejectionGuard installs the handler once per process; later calls do nothing. */
export function installRejectionGuard(logger: Logger): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason: unknown) => {
    if (isCommitFault(reason)) {
      // Every write of that batch got its own rejection and its answer; this one is lmdb's duplicate.
      logger.debug({ err: reason }, 'lmdb commit failure already answered to its writes');
      return;
    }
    logger.error({ err: reason }, 'unhandledRejection: a promise was rejected and nothing handled it; serving on');
  });
}
