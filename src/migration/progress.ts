/**
 * @module migration/progress
 * What a person watching a migration sees: one line per phase as it starts and ends (with how long it took), and
 * while objects are copied, their count, rate and the time left, rewritten in place on a terminal and every few
 * seconds otherwise (a log file is not flooded).
 */

/** Reporter prints a migration's progress. */
export class Reporter {
  readonly #out: NodeJS.WritableStream & { isTTY?: boolean };
  readonly #now: () => number;
  #phaseStart = 0;
  #phase = '';
  #lastLine = 0;
  #inPlace = false;

  constructor(out: NodeJS.WritableStream & { isTTY?: boolean } = process.stderr, now: () => number = Date.now) {
    this.#out = out;
    this.#now = now;
  }

  /** phase starts a phase (ending the previous one's counting line). */
  phase(name: string, what: string): void {
    this.#endInPlace();
    this.#phase = name;
    this.#phaseStart = this.#now();
    this.#out.write(`[${name}] ${what}\n`);
  }

  /** done ends the current phase with a summary. */
  done(summary: string): void {
    this.#endInPlace();
    this.#out.write(`[${this.#phase}] done in ${((this.#now() - this.#phaseStart) / 1000).toFixed(1)} s: ${summary}\n`);
  }

  /** info is one line of the current phase. */
  info(line: string): void {
    this.#endInPlace();
    this.#out.write(`[${this.#phase}] ${line}\n`);
  }

  /** count reports `n` of `total` objects handled so far (rate and time left from the phase's start). */
  count(n: number, total: number | undefined, force = false): void {
    const now = this.#now();
    const tty = this.#out.isTTY === true;
    if (!force && now - this.#lastLine < (tty ? 200 : 5000)) return;
    this.#lastLine = now;
    const secs = Math.max(0.001, (now - this.#phaseStart) / 1000);
    const rate = n / secs;
    const left = total !== undefined && rate > 0 ? Math.max(0, (total - n) / rate) : undefined;
    const line = `[${this.#phase}] ${n}${total !== undefined ? `/${total}` : ''} objects, ${Math.round(rate)}/s${left !== undefined ? `, about ${Math.ceil(left)} s left` : ''}`;
    if (tty) {
      this.#out.write(`\r\x1b[K${line}`);
      this.#inPlace = true;
    } else this.#out.write(`${line}\n`);
  }

  #endInPlace(): void {
    if (this.#inPlace) this.#out.write('\n');
    this.#inPlace = false;
  }
}
