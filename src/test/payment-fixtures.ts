// Test fixtures for the payment tests: orders placed through the real checkout endpoint, so the
// outbox rows are exactly what production writes. Used by *.test.ts only.
import { randomUUID } from "node:crypto";
import type { Db } from "../server/db/client";
import { callTrpc, TOKENS } from "./http";
import {
  createOutboxWorker,
  type WorkerLogger,
  type PaymentProvider,
  type ProviderEventBody,
} from "@/payments";
import type { TestProvider } from "./provider";

export interface PlacedTestOrder {
  orderId: string;
  key: string;
  totalCents: number;
}

export async function placeTestOrder(
  db: Db,
  overrides: { sku?: string; quantity?: number; key?: string; token?: string } = {},
): Promise<PlacedTestOrder> {
  const product = await db.product.findUniqueOrThrow({
    where: { sku: overrides.sku ?? "STK-008" },
  });
  const key = overrides.key ?? `test-${randomUUID()}`;
  const res = await callTrpc(db, {
    path: "checkout.placeOrder",
    input: { items: [{ productId: product.id, quantity: overrides.quantity ?? 1 }] },
    token: overrides.token ?? TOKENS.acme,
    key,
    method: "POST",
  });
  if (res.status !== 200)
    throw new Error(`placeOrder answered ${res.status}: ${JSON.stringify(res.json)}`);
  const order = res.json.result.data.order as { id: string; totalCents: number };
  return { orderId: order.id, key, totalCents: order.totalCents };
}

/**
 * An order charged at the provider (the worker has not run): its event waits for delivery, with its
 * body as the provider sends it.
 */
export async function chargedTestOrder(
  db: Db,
  provider: TestProvider,
  overrides: { sku?: string; quantity?: number } = {},
) {
  const order = await placeTestOrder(db, overrides);
  const outbox = await db.outboxMessage.findFirstOrThrow({ where: { aggregateId: order.orderId } });
  const charge = await provider.client.charge({
    idempotencyKey: outbox.idempotencyKey,
    reference: order.orderId,
    amountCents: order.totalCents,
    currency: "EUR",
  });
  const [event] = await provider.events(charge.id);
  if (!event) throw new Error(`the provider recorded no event for ${charge.id}`);
  const body: ProviderEventBody = { id: event.id, type: event.type, data: event.payload };
  return { ...order, charge, eventId: event.id, body };
}

/** A 19.00 EUR order (one BAG-003), and the provider key its charge goes out under. */
export async function placeOrder1900(db: Db) {
  const placed = await placeTestOrder(db, { sku: "BAG-003" });
  if (placed.totalCents !== 1900) throw new Error(`BAG-003 costs ${placed.totalCents}, not 1900`);
  const outbox = await db.outboxMessage.findFirstOrThrow({
    where: { aggregateId: placed.orderId },
  });
  return { ...placed, providerKey: outbox.idempotencyKey };
}

/**
 * Runs the outbox worker against `provider` until it claims nothing: what it delivered, retried
 * and dead-lettered, summed.
 */
export async function drainOutbox(
  db: Db,
  provider: PaymentProvider,
  config = {},
  logger?: WorkerLogger,
) {
  const worker = createOutboxWorker(db, { provider, config, logger });
  const totals = { delivered: 0, retried: 0, dead: 0 };
  for (;;) {
    const run = await worker.runOnce();
    if (run.claimed === 0) return totals;
    totals.delivered += run.delivered;
    totals.retried += run.retried;
    totals.dead += run.dead;
  }
}
