// Reconciliation beyond one order: orders (and their charges) that share a checkout intent, which
// the per-order checks see as books that agree; and dead letters whose order was paid after all.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { createReconciliation } from "./reconciliation";
import { drainOutbox, placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { handleProviderWebhook, type ProviderEventBody } from "./webhook";
import { testApp } from "../test/app";

const t = useTestDatabase();
const provider = useTestProvider();
const reconcile = () => createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runOnce();

describe("orders that share an intent", () => {
  it("a duplicate made before orders were unique per intent is flagged with both orders and both charges, once", async () => {
    const first = await placeTestOrder(t.db, { key: `dup-${randomUUID()}` });
    await drainOutbox(t.db, provider.client);
    const original = await t.db.order.findUniqueOrThrow({ where: { id: first.orderId } });
    // What the attack left behind before migration 0004: a second order for the same key (its
    // intentKey NULL, as the migration leaves duplicates), charged under the old per-order key.
    const chargeId = `ch_${randomUUID().replaceAll("-", "")}`;
    const duplicate = await t.db.order.create({
      data: {
        tenantId: "acme",
        userId: original.userId,
        totalCents: original.totalCents,
        currency: "EUR",
        idempotencyKey: first.key,
        status: "PAID",
        chargeId,
      },
    });
    await provider.sql(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status) VALUES ($1, $2, $3, $4, 'EUR', 'SUCCEEDED')`,
      [chargeId, `acme:${duplicate.id}:${first.key}`, duplicate.id, original.totalCents],
    );

    // Each order has exactly its one charge of the right amount: only the intent tells.
    const run = await reconcile();
    expect(run.findings).toEqual([
      expect.objectContaining({
        kind: "SHARED_INTENT",
        orderId: first.orderId,
        chargeIds: [original.chargeId!, chargeId].sort(),
        details: {
          tenantId: "acme",
          checkoutKey: first.key,
          orderIds: [first.orderId, duplicate.id],
        },
      }),
    ]);
    expect(run.recorded).toBe(1);
    expect(await reconcile()).toMatchObject({ recorded: 0 });
    expect(await t.db.reconciliationFinding.findMany()).toEqual([
      expect.objectContaining({ kind: "SHARED_INTENT", orderId: first.orderId }),
    ]);
  });
});

describe("a dead letter whose order was paid after all", () => {
  it("is closed with the order's charge and audited; an unpaid dead letter stays for the operator", async () => {
    const paidLate = await placeTestOrder(t.db);
    // The provider charges, then times out on every attempt: the worker gives up after one.
    await drainOutbox(t.db, (await provider.withFaults({ timeoutRate: 1 })).client, {
      maxAttempts: 1,
    });
    const unpaid = await placeTestOrder(t.db);
    await drainOutbox(t.db, (await provider.withFaults({ failureRate: 1 })).client, {
      maxAttempts: 1,
    });
    expect(await t.db.outboxMessage.count({ where: { status: "DEAD" } })).toBe(2);

    // The provider's webhook reports the charge that timed out on us: the order is PAID after all.
    const [charge] = await provider.charges(paidLate.orderId);
    const [event] = await provider.events(charge!.id);
    const body: ProviderEventBody = { id: event!.id, type: event!.type, data: event!.payload };
    expect((await handleProviderWebhook(testApp(t.db).payments, body)).status).toBe(200);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: paidLate.orderId } })).toMatchObject({
      status: "PAID",
      chargeId: charge!.id,
    });

    const run = await reconcile();
    expect(run.closedDeadLetters).toBe(1);
    // Money taken and order paid: nothing left to report about it (the earlier test's finding
    // stays).
    expect(
      run.findings.filter((f) => f.orderId === paidLate.orderId || f.orderId === unpaid.orderId),
    ).toEqual([]);
    const closed = await t.db.outboxMessage.findFirstOrThrow({
      where: { aggregateId: paidLate.orderId },
    });
    expect(closed).toMatchObject({
      status: "DELIVERED",
      result: { chargeId: charge!.id, status: "SUCCEEDED", closedBy: "reconciliation" },
    });
    expect(closed.deliveredAt).not.toBeNull();
    expect(await t.db.auditEntry.findMany({ where: { targetId: closed.id } })).toEqual([
      expect.objectContaining({
        actor: "reconciliation",
        action: "outbox.close",
        targetType: "OutboxMessage",
      }),
    ]);
    expect(
      await t.db.outboxMessage.findFirstOrThrow({ where: { aggregateId: unpaid.orderId } }),
    ).toMatchObject({ status: "DEAD" });
    expect(await reconcile()).toMatchObject({ closedDeadLetters: 0 });
  });
});
