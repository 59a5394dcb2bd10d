/**
 * @module util/in-parallel
 * inParallel runs `f` on every item with at most `width` calls in flight, and rejects with the first failure.
 */
export async function inParallel<T>(items: readonly T[], width: number, f: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await f(items[next++] as T);
    }),
  );
}
