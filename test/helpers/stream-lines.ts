/**
 * readLines hands each newline-terminated line of a text stream (newline included) to `onLine`, in the
 * background, until the stream ends or is destroyed by the test (then `onEnd`); a partial last line is dropped.
 */
export function readLines(body: AsyncIterable<string>, onLine: (line: string) => void, onEnd?: () => void): void {
  void (async () => {
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          onLine(buf.slice(0, i + 1));
          buf = buf.slice(i + 1);
        }
      }
    } catch {
      // destroyed by the test
    }
    onEnd?.();
  })();
}
