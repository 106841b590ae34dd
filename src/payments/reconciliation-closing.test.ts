// Findings have a life: a disagreement that is gone when its subject is judged again is closed by
// reconciliation (audited, one log line), and opened again (audited) if it comes back. An order
// placed again after its own was lost, which took over the charge its key holds, is never
// reported as paid without a charge, however much older the charge. And a run writes each page's
// findings before it reads the next page, listing only the first LISTED_FINDINGS of them.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { drainOutbox, placeOrder1900, placeTestOrder } from "../test/payment-fixtures";
import type { FindingLogger } from "./books/finding-log";
import { CLOSED_NOTE } from "./books/record";
import { DEFAULT_RECONCILE_BUDGET } from "./config";
import type { ListedCharge, PaymentProvider } from "./provider";
import { createReconciliation } from "./reconciliation";
import { LISTED_FINDINGS } from "./reconciliation-scope";

const t = useTestDatabase();
const provider = useTestProvider();
const DAY = 86_400;

function capture() {
  const lines: { fields: { state?: string; finding?: { kind: string } }; message: string }[] = [];
  const keep = (fields: object, message: string) => lines.push({ fields, message });
  const logger: FindingLogger = { warn: keep, info: keep };
  return { lines, logger };
}

/** A restore loses the order, its outbox row and its checkout key's record. */
async function loseOrder(order: { orderId: string; key: string }) {
  await t.db.$executeRaw`DELETE FROM "OutboxMessage" WHERE "aggregateId" = ${order.orderId}`;
  await t.db.$executeRaw`DELETE FROM "Order" WHERE "id" = ${order.orderId}::uuid`;
  await t.db
    .$executeRaw`DELETE FROM "IdempotencyKey" WHERE "scope" = 'acme' AND "key" = ${order.key}`;
}

const auditOf = (targetId: string) =>
  t.db.auditEntry.findMany({ where: { targetId }, orderBy: { createdAt: "asc" } });

describe("a finding whose disagreement is gone", () => {
  it("is closed by reconciliation, audited and said; it opens again, audited, when it comes back", async () => {
    const order = await placeTestOrder(t.db);
    await drainOutbox(t.db, provider.client);
    const log = capture();
    const reconcile = () =>
      createReconciliation(t.db, provider.client, {
        settleSeconds: 0,
        logger: log.logger,
      }).runOnce();
    const setAmount = (sql: string) =>
      provider.sql(`UPDATE charges SET amount_cents = ${sql} WHERE reference = $1`, [
        order.orderId,
      ]);

    await setAmount("amount_cents + 1");
    await reconcile();
    const open = await t.db.reconciliationFinding.findFirstOrThrow({
      where: { orderId: order.orderId },
    });
    expect(open).toMatchObject({ kind: "AMOUNT_MISMATCH", resolvedAt: null });

    // The provider's record is corrected: the next run judges the charge and closes the finding.
    await setAmount("amount_cents - 1");
    expect(await reconcile()).toMatchObject({ closed: 1, recorded: 0 });
    expect(
      await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: open.id } }),
    ).toMatchObject({ resolvedBy: "reconciliation", resolution: CLOSED_NOTE });
    expect((await auditOf(open.id)).map((a) => [a.actor, a.action])).toEqual([
      ["reconciliation", "reconciliation.close"],
    ]);
    expect(log.lines.map((l) => l.fields.state)).toEqual(["new", "closed"]);
    // Closed stays closed while the books agree.
    expect(await reconcile()).toMatchObject({ closed: 0, reopened: 0 });

    await setAmount("amount_cents + 1");
    expect(await reconcile()).toMatchObject({ reopened: 1 });
    expect(
      await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: open.id } }),
    ).toMatchObject({ resolvedAt: null, timesFound: 2 });
    expect((await auditOf(open.id)).map((a) => a.action)).toEqual([
      "reconciliation.close",
      "reconciliation.reopen",
    ]);
    expect(log.lines.map((l) => l.fields.state)).toEqual(["new", "closed", "reopened"]);
  });

  it("a paid order's missing charge: closed once the provider holds it again", async () => {
    const order = await placeTestOrder(t.db);
    await drainOutbox(t.db, provider.client);
    const [charge] = await provider.sql<{ id: string }>(
      `UPDATE charges SET reference = 'elsewhere', idempotency_key = 'elsewhere-' || id WHERE reference = $1 RETURNING id`,
      [order.orderId],
    );
    // Its charge now names nothing and is no longer under its key: it is not this order's.
    await t.db.order.update({ where: { id: order.orderId }, data: { chargeId: "ch_gone" } });
    const reconcile = () =>
      createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runOnce();
    await reconcile();
    const missing = await t.db.reconciliationFinding.findFirstOrThrow({
      where: { orderId: order.orderId, kind: "PAID_ORDER_WITHOUT_CHARGE" },
    });
    await t.db.order.update({ where: { id: order.orderId }, data: { chargeId: charge!.id } });
    await reconcile();
    expect(
      (await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: missing.id } }))
        .resolvedAt,
    ).not.toBeNull();
  });
});

describe("a lost order's intent placed again", () => {
  it("the charge the new order took over, days older than it, is that order's: no finding, in the job or --all", async () => {
    const first = await placeOrder1900(t.db);
    await drainOutbox(t.db, provider.client);
    const { chargeId } = await t.db.order.findUniqueOrThrow({ where: { id: first.orderId } });
    // The order was charged three days ago, then lost (a restore); placed again today with its
    // key, the new order takes over the charge the provider holds under the intent's key.
    await provider.sql(`UPDATE charges SET created_at = now() - interval '3 days' WHERE id = $1`, [
      chargeId,
    ]);
    await loseOrder(first);
    const again = await placeTestOrder(t.db, { sku: "BAG-003", key: first.key });
    await drainOutbox(t.db, provider.client);
    expect(await t.db.order.findUniqueOrThrow({ where: { id: again.orderId } })).toMatchObject({
      status: "PAID",
      chargeId,
    });

    const job = createReconciliation(t.db, provider.client, { settleSeconds: 0 });
    for (let run = 0; run < 10; run++) if ((await job.runOnce()).sweep?.lapCompleted) break;
    await job.runSince();
    expect(
      await t.db.reconciliationFinding.findMany({
        where: { OR: [{ orderId: again.orderId }, { chargeIds: { has: chargeId! } }] },
      }),
    ).toEqual([]);
  });
});

describe("a lost order's intent placed again with another cart", () => {
  it("the worker's finding (the key's charge is of another amount) stays open: reconciliation judges the charge as that order's", async () => {
    const first = await placeOrder1900(t.db);
    await drainOutbox(t.db, provider.client);
    const { chargeId } = await t.db.order.findUniqueOrThrow({ where: { id: first.orderId } });
    await loseOrder(first);
    // Placed again with the same key and another cart: its total is not the charge's.
    const again = await placeTestOrder(t.db, { sku: "STK-008", key: first.key });
    expect(again.totalCents).not.toBe(1900);
    await drainOutbox(t.db, provider.client);
    const refused = await t.db.reconciliationFinding.findFirstOrThrow({
      where: { orderId: again.orderId },
    });
    expect(refused).toMatchObject({ kind: "AMOUNT_MISMATCH", chargeIds: [chargeId] });

    const job = createReconciliation(t.db, provider.client, { settleSeconds: 0 });
    await job.runOnce();
    await job.runSince();
    const about = await t.db.reconciliationFinding.findMany({
      where: { chargeIds: { has: chargeId! } },
    });
    expect(about.map((f) => [f.kind, f.orderId, f.resolvedAt])).toEqual([
      ["AMOUNT_MISMATCH", again.orderId, null],
    ]);
  });
});

describe("a run under a provider whose list never ends", () => {
  it("writes each page's findings before reading the next, and lists only the first of them", async () => {
    let served = 0;
    const recordedBeforePage: number[] = [];
    // Pages of 100 charges, each for an order the shop never had, every page saying there is more.
    const endless: PaymentProvider = {
      charge: provider.client.charge,
      async listCharges(query) {
        recordedBeforePage.push(await t.db.reconciliationFinding.count());
        const created = query.createdGte ?? Math.floor(Date.now() / 1000) - DAY;
        const data: ListedCharge[] = Array.from({ length: query.limit ?? 100 }, () => ({
          id: `ch_endless_${served++}`,
          status: "SUCCEEDED",
          reference: randomUUID(),
          amountCents: 100,
          currency: "EUR",
          created,
        }));
        return { data, hasMore: true, bytes: 0 };
      },
    };
    const before = await t.db.reconciliationFinding.count();
    const run = await createReconciliation(t.db, endless, {
      settleSeconds: 0,
      budget: { ...DEFAULT_RECONCILE_BUDGET, maxPages: 6 },
    }).runOnce();

    // The first call reads the provider's oldest charge (where history starts); then each page of
    // the recent list is read once the previous page's 100 findings are recorded.
    const pages = recordedBeforePage.slice(1).map((n) => n - before);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages).toEqual(pages.map((_, i) => 100 * i));
    expect(run.recorded).toBe(served - 1);
    expect(run.findings).toHaveLength(LISTED_FINDINGS);
    expect(run.more).toBe(true);
  });
});
