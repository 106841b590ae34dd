// An order's lines as both sides write them: one line per product (quantities added, empty lines
// dropped), sorted by product id. The browser submits its cart so, and the same cart then
// fingerprints the same on every retry; the server places it so: one stock update per product,
// always taken in the same order, so two carts that share products lock their rows in the same
// sequence and cannot deadlock.

export interface OrderLine {
  productId: string;
  quantity: number;
}

export function mergeLines(lines: readonly OrderLine[]): OrderLine[] {
  const merged = new Map<string, number>();
  for (const { productId, quantity } of lines)
    if (quantity > 0) merged.set(productId, (merged.get(productId) ?? 0) + quantity);
  return [...merged.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([productId, quantity]) => ({ productId, quantity }));
}
