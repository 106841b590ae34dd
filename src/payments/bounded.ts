// Bounded parallelism: a batch's provider calls (or webhook deliveries) run a few at a time, so a
// batch finishes in about (size / limit) call times instead of size call times, while the provider
// never sees more than `limit` calls at once from one worker.

/**
 * `fn` over `items`, at most `limit` at a time; results in the items' order. Never rejects if `fn`
 * does not.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  return results;
}
