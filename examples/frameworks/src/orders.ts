// What the three apps' existing POST /orders handlers share: reading an order, and the answer for
// one placed. An order of many lines makes an answer too large to store (the draft's omitted body).
import type { Order } from "./generated/prisma/client";

export interface NewOrder {
  item?: string;
  quantity?: number;
}

/** Why an order cannot be placed (the handler's own 400), or undefined. */
export function invalidOrder({ item, quantity }: NewOrder): string | undefined {
  if (!item || !Number.isInteger(quantity) || quantity! < 1 || quantity! > 100_000)
    return "an item and a quantity of 1 to 100000";
}

/** The warehouse this demo cannot reach: the handler answers 503 (a 5xx: never stored). */
export const UNREACHABLE_ITEM = "from-the-closed-warehouse";

export function receipt(order: Order) {
  const lines = Array.from({ length: order.quantity }, (_, line) => ({ line, item: order.item }));
  return { ...order, lines };
}
