// Test fixtures for the payment tests: orders placed through the real checkout endpoint, so the
// outbox rows are exactly what production writes. Used by *.test.ts only.
import { randomUUID } from "node:crypto";
import type { Db } from "../server/db/client";
import { callTrpc, TOKENS } from "./http";
import { SimulatedProvider } from "../server/payments/provider";
import type { ProviderEventBody } from "../server/payments/webhook";

export interface PlacedTestOrder {
  orderId: string;
  key: string;
  totalCents: number;
}

export async function placeTestOrder(db: Db, overrides: { sku?: string; quantity?: number; key?: string; token?: string } = {}): Promise<PlacedTestOrder> {
  const product = await db.product.findUniqueOrThrow({ where: { sku: overrides.sku ?? "STK-008" } });
  const key = overrides.key ?? `test-${randomUUID()}`;
  const res = await callTrpc(db, {
    path: "checkout.placeOrder",
    input: { items: [{ productId: product.id, quantity: overrides.quantity ?? 1 }] },
    token: overrides.token ?? TOKENS.acme,
    key,
    method: "POST",
  });
  if (res.status !== 200) throw new Error(`placeOrder answered ${res.status}: ${JSON.stringify(res.json)}`);
  const order = res.json.result.data.order as { id: string; totalCents: number };
  return { orderId: order.id, key, totalCents: order.totalCents };
}

/** An order charged at the provider (the worker has not run): its event waits for delivery, with its body as the provider sends it. */
export async function chargedTestOrder(db: Db, overrides: { sku?: string; quantity?: number } = {}) {
  const order = await placeTestOrder(db, overrides);
  const outbox = await db.outboxMessage.findFirstOrThrow({ where: { aggregateId: order.orderId } });
  const charge = await new SimulatedProvider(db).charge({
    idempotencyKey: outbox.idempotencyKey,
    reference: order.orderId,
    amountCents: order.totalCents,
    currency: "EUR",
  });
  const event = await db.providerEvent.findFirstOrThrow({ where: { chargeId: charge.id } });
  const body: ProviderEventBody = { id: event.id, type: event.type as ProviderEventBody["type"], data: event.payload as ProviderEventBody["data"] };
  return { ...order, charge, eventId: event.id, body };
}
