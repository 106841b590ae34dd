// The outbox worker against a real PostgreSQL: delivery, the provider's timeout-after-charge,
// two workers on one outbox, and dead-lettering past the retry bound (with an injected clock).
import { describe, expect, it } from "vitest";
import { createDb } from "../server/db/client";
import { useTestDatabase } from "../test/database";
import { backoffMs } from "./backoff";
import { DEFAULT_OUTBOX_CONFIG } from "./config";
import { createOutboxWorker, type OutboxWorker } from "./outbox-worker";
import type { ChargeRequest, PaymentProvider } from "./provider";
import { placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";

const t = useTestDatabase();
const provider = useTestProvider();

async function drain(worker: OutboxWorker) {
  while ((await worker.runOnce()).claimed > 0);
}

/** A provider that counts calls per key, to prove each row reached it once. */
function counting(provider: PaymentProvider) {
  const calls = new Map<string, number>();
  return {
    calls,
    listCharges: provider.listCharges,
    async charge(request: ChargeRequest) {
      calls.set(request.idempotencyKey, (calls.get(request.idempotencyKey) ?? 0) + 1);
      return provider.charge(request);
    },
  };
}

const outboxOf = (orderId: string) =>
  t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: orderId } });

describe("delivery", () => {
  it("charges once under the order's key, records the charge and marks the row delivered", async () => {
    const { orderId, totalCents } = await placeTestOrder(t.db, { quantity: 3 });
    const worker = createOutboxWorker(t.db, { provider: provider.client });
    expect(await worker.runOnce()).toEqual({
      claimed: 1,
      delivered: 1,
      retried: 0,
      dead: 0,
      fenced: 0,
    });

    const charges = await provider.charges(orderId);
    expect(charges).toHaveLength(1);
    expect(charges[0]).toMatchObject({
      amountCents: totalCents,
      currency: "EUR",
      status: "SUCCEEDED",
    });
    const row = await outboxOf(orderId);
    expect(row).toMatchObject({
      status: "DELIVERED",
      attempts: 1,
      lockedUntil: null,
      result: { chargeId: charges[0]!.id, status: "SUCCEEDED" },
    });
    expect(row.idempotencyKey).toBe(charges[0]!.idempotencyKey);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charges[0]!.id,
    });
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });
  });

  it("a provider timeout after charging is retried under the same key and finds the first charge", async () => {
    const { orderId } = await placeTestOrder(t.db);
    let clock = new Date(Date.now() + 1_000);
    const timingOut = createOutboxWorker(t.db, {
      provider: (await provider.withFaults({ timeoutRate: 1 })).client,
      clock: () => clock,
    });
    expect(await timingOut.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
    const [charge] = await provider.charges(orderId);
    expect(charge).toBeDefined();
    const waiting = await outboxOf(orderId);
    expect(waiting).toMatchObject({ status: "PENDING", attempts: 1, lockedUntil: null });
    expect(waiting.lastError).toContain("ProviderTimeoutError");
    expect(waiting.nextAttemptAt.getTime()).toBeGreaterThan(clock.getTime());
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PENDING",
      chargeId: null,
    });

    const healthy = createOutboxWorker(t.db, { provider: provider.client, clock: () => clock });
    expect(await healthy.runOnce()).toMatchObject({ claimed: 0 }); // backoff respected
    clock = new Date(clock.getTime() + DEFAULT_OUTBOX_CONFIG.baseBackoffMs);
    expect(await healthy.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    expect((await provider.charges(orderId)).length).toBe(1);
    expect(await outboxOf(orderId)).toMatchObject({
      status: "DELIVERED",
      attempts: 2,
      result: { chargeId: charge!.id, replayed: true },
    });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charge!.id,
    });
  });

  it("a declined charge is delivered and the order says its payment failed", async () => {
    // 99 desk lamps are above the simulated provider's decline limit; stock first.
    const lamp = await t.db.product.update({ where: { sku: "LMP-010" }, data: { stock: 99 } });
    const { orderId } = await placeTestOrder(t.db, { sku: lamp.sku, quantity: 99 });
    await drain(createOutboxWorker(t.db, { provider: provider.client }));
    expect(await outboxOf(orderId)).toMatchObject({
      status: "DELIVERED",
      result: { status: "FAILED" },
    });
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAYMENT_FAILED",
    });
  });
});

describe("two workers on one outbox", () => {
  it("deliver each row once", async () => {
    const orders = await Promise.all(Array.from({ length: 12 }, () => placeTestOrder(t.db)));
    // Two clients, two pools: as two processes would be.
    const dbA = createDb(t.url);
    const dbB = createDb(t.url);
    try {
      const counted = counting(provider.client);
      const a = createOutboxWorker(dbA, { provider: counted, config: { batchSize: 3 } });
      const b = createOutboxWorker(dbB, { provider: counted, config: { batchSize: 3 } });
      let delivered = 0;
      for (;;) {
        const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
        delivered += ra.delivered + rb.delivered;
        expect(ra.fenced + rb.fenced).toBe(0);
        if (ra.claimed + rb.claimed === 0) break;
      }
      expect(delivered).toBe(12);
      expect([...counted.calls.values()]).toEqual(Array(12).fill(1));
      for (const { orderId } of orders) {
        expect((await provider.charges(orderId)).length).toBe(1);
        expect(await outboxOf(orderId)).toMatchObject({ status: "DELIVERED", attempts: 1 });
      }
    } finally {
      await Promise.all([dbA.$disconnect(), dbB.$disconnect()]);
    }
  });
});

describe("retry bound", () => {
  it("past the bound the row is dead-lettered and the order says payment failed", async () => {
    const { orderId } = await placeTestOrder(t.db);
    let clock = new Date(Date.now() + 1_000);
    const config = { maxAttempts: 3, baseBackoffMs: 1_000, maxBackoffMs: 4_000 };
    const worker = createOutboxWorker(t.db, {
      provider: (await provider.withFaults({ failureRate: 1 })).client,
      config,
      clock: () => clock,
    });

    expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
    clock = new Date(clock.getTime() + config.maxBackoffMs);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, retried: 1 });
    clock = new Date(clock.getTime() + config.maxBackoffMs);
    expect(await worker.runOnce()).toMatchObject({ claimed: 1, dead: 1 });
    clock = new Date(clock.getTime() + 3_600_000);
    expect(await worker.runOnce()).toMatchObject({ claimed: 0 });

    const row = await outboxOf(orderId);
    expect(row).toMatchObject({
      status: "DEAD",
      attempts: 3,
      lockedUntil: null,
      deliveredAt: null,
    });
    expect(row.lastError).toContain("ProviderUnavailableError");
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAYMENT_FAILED",
      chargeId: null,
    });
    expect((await provider.charges(orderId)).length).toBe(0);

    // The operator retries the dead row once the provider is back (admin.outbox.retry does this
    // update): the charge goes through, and the order, which said "failed", now says paid.
    await t.db.outboxMessage.update({
      where: { id: row.id },
      data: { status: "PENDING", attempts: 0, nextAttemptAt: clock },
    });
    const healthy = createOutboxWorker(t.db, {
      provider: provider.client,
      config,
      clock: () => clock,
    });
    expect(await healthy.runOnce()).toMatchObject({ claimed: 1, delivered: 1 });
    const [charge] = await provider.charges(orderId);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charge!.id,
    });
  });

  it("backoff doubles from the base, is capped, and jitters within the upper half", () => {
    const config = { baseBackoffMs: 1_000, maxBackoffMs: 10_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffMs(n, config, () => 1))).toEqual([
      1_000, 2_000, 4_000, 8_000, 10_000, 10_000,
    ]);
    expect([1, 2, 3].map((n) => backoffMs(n, config, () => 0))).toEqual([500, 1_000, 2_000]);
  });
});

describe("a batch", () => {
  it("is charged a few at a time, never more than the bound, and recorded whole", async () => {
    await drain(createOutboxWorker(t.db, { provider: provider.client })); // earlier tests' rows
    const orders = await Promise.all(Array.from({ length: 6 }, () => placeTestOrder(t.db)));
    const inner = provider.client;
    let inFlight = 0;
    let most = 0;
    let threeInFlight!: () => void;
    const gate = new Promise<void>((resolve) => (threeInFlight = resolve));
    const deadline = AbortSignal.timeout(10_000);
    const gated: PaymentProvider = {
      listCharges: inner.listCharges,
      async charge(request) {
        most = Math.max(most, ++inFlight);
        if (inFlight === 3) threeInFlight();
        // Each call waits until three are in flight at once: a worker that calls one at a time
        // never gets there.
        await Promise.race([
          gate,
          new Promise((_, reject) =>
            deadline.addEventListener("abort", () => reject(new Error("never 3 calls in flight"))),
          ),
        ]);
        try {
          return await inner.charge(request);
        } finally {
          inFlight--;
        }
      },
    };
    const worker = createOutboxWorker(t.db, {
      provider: gated,
      config: { batchSize: 6, concurrency: 3 },
    });
    expect(await worker.runOnce()).toEqual({
      claimed: 6,
      delivered: 6,
      retried: 0,
      dead: 0,
      fenced: 0,
    });
    expect(most).toBe(3);
    for (const { orderId } of orders) {
      const charge = (await provider.charges(orderId))[0]!;
      expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
        status: "PAID",
        chargeId: charge.id,
      });
      expect(await outboxOf(orderId)).toMatchObject({
        status: "DELIVERED",
        result: { chargeId: charge.id },
      });
    }
  });
});
