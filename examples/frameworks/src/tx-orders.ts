// What each app's POST /tx-orders shares: a handler written for the key's transaction, beside the
// existing POST /orders (which keeps its own Prisma client). It writes the order through `tx`, so
// the row and the key's completion commit together; an order sent with `fail` throws after its
// write, and the transaction rolls back with the row in it (the key is released: a retry runs).
import type { Prisma } from "./generated/prisma/client";
import { invalidOrder, receipt, type NewOrder } from "./orders";

export type TxOrder = NewOrder & { fail?: boolean };

/** The answer: 201 and the receipt, or the handler's own 400; throws for an order with `fail`. */
export async function placeInTransaction(
  tx: Prisma.TransactionClient,
  owner: string,
  order: TxOrder,
): Promise<{ status: number; body: object }> {
  const invalid = invalidOrder(order);
  if (invalid) return { status: 400, body: { error: invalid } };
  const placed = await tx.order.create({
    data: { owner, item: order.item!, quantity: order.quantity! },
  });
  if (order.fail) throw new Error("failed after writing the order: it rolls back with the key");
  return { status: 201, body: receipt(placed) };
}
