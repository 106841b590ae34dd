// The one percentile of the benches and the soak: the nearest-rank value of an ascending list
// (NaN for an empty one: no figure, rather than a made-up 0).
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[
    Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  ]!;
}
