// Reconciliation reads the provider's charges through its list API (the real service, its books
// in a database of their own) and compares them with the orders: each finding recorded once, a
// window per run kept by a cursor in the shop's database.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { reconcileCommand as runReconcile } from "../test/reconcile-command";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { chargedTestOrder, placeTestOrder } from "../test/payment-fixtures";
import { createOutboxWorker } from "./outbox-worker";
import type { PaymentProvider } from "./provider";
import type { FindingLogger } from "./books/finding-log";
import { createReconciliation, LATE_WRITE_MARGIN_SECONDS, type Finding } from "./reconciliation";

const t = useTestDatabase();
const provider = useTestProvider();
/** Judges charges made a moment ago (the default leaves the last 30 s to the next run). */
const reconcile = () => createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runOnce();

async function paidOrders(n: number) {
  const orders = [];
  for (let i = 0; i < n; i++) orders.push(await placeTestOrder(t.db, { quantity: i + 1 }));
  const worker = createOutboxWorker(t.db, { provider: provider.client });
  while ((await worker.runOnce()).claimed > 0);
  return orders;
}

/** A logger that keeps each line's text and fields. */
function capture() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const keep = (fields: object, message: string) =>
    lines.push({ message, fields: fields as Record<string, unknown> });
  const logger: FindingLogger = { warn: keep, info: keep };
  return { lines, logger, said: () => lines.map((l) => l.message) };
}

/**
 * A charge written straight into the provider's books (what a real provider's records may hold).
 */
async function plantCharge(c: {
  reference: string;
  amountCents?: number;
  ageSeconds?: number;
}): Promise<string> {
  const id = `ch_planted${randomUUID().replaceAll("-", "")}`;
  await provider.sql(
    `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
     VALUES ($1, $2, $3, $4, 'EUR', 'SUCCEEDED', clock_timestamp() - make_interval(secs => $5))`,
    [id, `planted-${id}`, c.reference, c.amountCents ?? 500, c.ageSeconds ?? 0],
  );
  return id;
}

describe("reconciliation", () => {
  it("finds nothing when every paid order has exactly its one charge", async () => {
    await paidOrders(3);
    const run = await reconcile();
    expect(run).toMatchObject({ findings: [], recorded: 0, closedDeadLetters: 0 });
    // Both passes list the three charges (the sweep's first lap covers this young history).
    expect(run.charges).toBeGreaterThanOrEqual(3);
    expect(await t.db.reconciliationFinding.count()).toBe(0);
  });

  it("finds a second charge for a paid order, once", async () => {
    const [order] = await paidOrders(1);
    const { chargeId } = await t.db.order.findUniqueOrThrow({ where: { id: order!.orderId } });
    const planted = await plantCharge({
      reference: order!.orderId,
      amountCents: order!.totalCents,
    });

    const run = await reconcile();
    expect(run.recorded).toBe(1);
    expect(run.findings).toEqual([
      expect.objectContaining({
        kind: "DUPLICATE_CHARGE",
        orderId: order!.orderId,
        chargeIds: [chargeId, planted],
      }),
    ]);
    expect(await reconcile()).toMatchObject({ recorded: 0 });
    expect(await t.db.reconciliationFinding.findMany()).toEqual([
      expect.objectContaining({ kind: "DUPLICATE_CHARGE", orderId: order!.orderId }),
    ]);
  });

  it("finds a charge whose order was lost, a paid order without charge and an amount mismatch", async () => {
    const [paidNoCharge, mismatched] = await paidOrders(2);
    await provider.sql(
      `DELETE FROM events WHERE charge_id IN (SELECT id FROM charges WHERE reference = $1)`,
      [paidNoCharge!.orderId],
    );
    await provider.sql(`DELETE FROM charges WHERE reference = $1`, [paidNoCharge!.orderId]);
    await provider.sql(`UPDATE charges SET amount_cents = amount_cents + 1 WHERE reference = $1`, [
      mismatched!.orderId,
    ]);
    // An order the shop answered 200 for and then lost (a failover): its charge is all that is
    // left.
    const lost = await plantCharge({ reference: randomUUID() });

    const log = capture();
    const { findings, recorded } = await createReconciliation(t.db, provider.client, {
      settleSeconds: 0,
      logger: log.logger,
    }).runOnce();
    const mine = findings.filter((f) => f.kind !== "DUPLICATE_CHARGE"); // the previous test's is still in the window
    expect(mine.map((f) => f.kind).sort()).toEqual([
      "AMOUNT_MISMATCH",
      "CHARGE_WITHOUT_ORDER",
      "PAID_ORDER_WITHOUT_CHARGE",
    ]);
    expect(recorded).toBe(3);
    expect(findings.find((f) => f.kind === "CHARGE_WITHOUT_ORDER")).toMatchObject({
      chargeIds: [lost],
      orderId: null,
    });
    expect(findings.find((f) => f.kind === "PAID_ORDER_WITHOUT_CHARGE")).toMatchObject({
      orderId: paidNoCharge!.orderId,
    });
    expect(findings.find((f) => f.kind === "AMOUNT_MISMATCH")).toMatchObject({
      orderId: mismatched!.orderId,
    });
    // One structured line per new finding, naming its kind and what it is about.
    expect(log.said()).toHaveLength(3);
    expect(log.said()).toContain(
      `[reconciliation] new finding CHARGE_WITHOUT_ORDER: no order, charge ${lost} (dashboard: /admin)`,
    );
    expect(log.lines.find((l) => l.message.includes(lost))!.fields).toMatchObject({
      finding: { kind: "CHARGE_WITHOUT_ORDER", subject: `charge:${lost}`, chargeIds: [lost] },
      state: "new",
      source: "reconciliation",
    });
    expect(
      log.said().some((line) => line.includes(`AMOUNT_MISMATCH: order ${mismatched!.orderId}`)),
    ).toBe(true);
    // Found again by the next run: recorded nothing, told nothing.
    const again = await createReconciliation(t.db, provider.client, {
      settleSeconds: 0,
      logger: log.logger,
    }).runOnce();
    expect(again).toMatchObject({ recorded: 0 });
    expect(log.said()).toHaveLength(3);
    expect(await t.db.reconciliationFinding.count()).toBe(4);
  });

  it("judges a late-written charge in the recent pass and an old one in the sweep", async () => {
    await reconcile();
    const cursor = await t.db.reconciliationCursor.findUniqueOrThrow({
      where: { name: "provider-charges" },
    });
    const old = await plantCharge({
      reference: randomUUID(),
      ageSeconds: LATE_WRITE_MARGIN_SECONDS + 600,
    });
    const late = await plantCharge({
      reference: randomUUID(),
      ageSeconds: LATE_WRITE_MARGIN_SECONDS / 2,
    });
    // This shop's history is younger than one slice: one run's sweep covers all of it.
    const run = await reconcile();
    const judged = run.findings.flatMap((f) => f.chargeIds);
    expect(judged).toContain(late);
    expect(judged).toContain(old);
    expect(run.sweep?.lapCompleted).toBe(true);
    expect(
      (
        await t.db.reconciliationCursor.findUniqueOrThrow({ where: { name: "provider-charges" } })
      ).judgedThrough.getTime(),
    ).toBeGreaterThan(cursor.judgedThrough.getTime());
  });

  it("a charge whose order is still paying is judged later, not passed by", async () => {
    await reconcile();
    // Charged, and the worker has not recorded it yet: the order says PENDING.
    const { charge, ...order } = await chargedTestOrder(t.db, provider);
    const held = await reconcile();
    expect(held.findings.filter((f) => f.orderId === order.orderId)).toEqual([]);
    // It holds no cursor: the recent pass moves past it.
    const cursor = (
      await t.db.reconciliationCursor.findUniqueOrThrow({ where: { name: "provider-charges" } })
    ).judgedThrough;
    const [listed] = await provider.charges(order.orderId);
    expect(cursor.getTime()).toBeGreaterThan(listed!.createdAt.getTime());
    // The worker gives up on it (as after timeouts): the order says its payment failed, the money
    // is taken.
    await t.db.order.update({ where: { id: order.orderId }, data: { status: "PAYMENT_FAILED" } });
    // The order's change is what the recent pass sees, though its charge is behind the cursor.
    const later = await reconcile();
    expect(later.findings).toContainEqual(
      expect.objectContaining({
        kind: "CHARGE_WITHOUT_ORDER",
        orderId: order.orderId,
        chargeIds: [charge.id],
      }),
    );
  });

  it("an order charged and paid while the run reads the provider's list is not a paid order without a charge", async () => {
    await reconcile();
    const order = await placeTestOrder(t.db);
    const outbox = await t.db.outboxMessage.findFirstOrThrow({
      where: { aggregateId: order.orderId },
    });
    // The worker charges and records the payment just after the list was read.
    const racing: PaymentProvider = {
      charge: provider.client.charge,
      async listCharges(query) {
        const page = await provider.client.listCharges(query);
        const charge = await provider.client.charge({
          idempotencyKey: outbox.idempotencyKey,
          reference: order.orderId,
          amountCents: order.totalCents,
          currency: "EUR",
        });
        await t.db.order.update({
          where: { id: order.orderId },
          data: { status: "PAID", chargeId: charge.id },
        });
        return page;
      },
    };
    const run = await createReconciliation(t.db, racing, { settleSeconds: 0 }).runOnce();
    expect(run.findings.filter((f) => f.orderId === order.orderId)).toEqual([]);
    expect((await reconcile()).findings.filter((f) => f.orderId === order.orderId)).toEqual([]);
  });

  it("a charge taken over by the order placed again after its own was lost is that order's", async () => {
    // The provider charged under the intent's key for an order the shop then lost; the order
    // placed again took the charge over: the charge still names the vanished order.
    const order = await placeTestOrder(t.db);
    const charge = await plantCharge({ reference: randomUUID(), amountCents: order.totalCents });
    await t.db.order.update({
      where: { id: order.orderId },
      data: { status: "PAID", chargeId: charge },
    });
    const mine = (r: { findings: Finding[] }) =>
      r.findings.filter((f) => f.orderId === order.orderId || f.chargeIds.includes(charge));
    expect(mine(await reconcile())).toEqual([]);
    expect(
      mine(await createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runSince()),
    ).toEqual([]);
    // The same charge naming a vanished order, recorded by no order, is money without an order.
    await t.db.order.update({ where: { id: order.orderId }, data: { chargeId: null } });
    const kinds = mine(
      await createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runSince(),
    ).map((f) => f.kind);
    expect(kinds.sort()).toEqual(["CHARGE_WITHOUT_ORDER", "PAID_ORDER_WITHOUT_CHARGE"]);
  });

  it(
    "npm run reconcile -- --all prints the findings of the whole history and records nothing twice",
    { timeout: 30_000 },
    async () => {
      const old = await plantCharge({ reference: randomUUID(), ageSeconds: 30 * 86_400 });
      const first = await reconcileCommand("--all");
      expect(first.stdout).toMatch(new RegExp(`CHARGE_WITHOUT_ORDER\torder=-\tcharges=${old}`));
      expect(first.stdout).toMatch(
        /reconciliation: judged up to \S+: \d+ finding\(s\), [1-9]\d* new/,
      );
      const again = await reconcileCommand("--since", "2000-01-01");
      expect(again.stdout).toMatch(new RegExp(`charges=${old}`));
      expect(again.stdout).toMatch(/reconciliation: judged up to \S+: \d+ finding\(s\), 0 new/);
    },
  );

  it(
    "npm run reconcile judges up to now, and says which charges it leaves in flight",
    { timeout: 30_000 },
    async () => {
      // Made a second ago: the job leaves it to its next run, the command judges it.
      const fresh = await plantCharge({ reference: randomUUID(), ageSeconds: 1 });
      // Charged a moment ago, its order still PENDING: in flight, left for later, and said so.
      const paying = await chargedTestOrder(t.db, provider);
      const { stdout } = await reconcileCommand();
      expect(stdout).toMatch(new RegExp(`CHARGE_WITHOUT_ORDER\torder=-\tcharges=${fresh}`));
      expect(stdout).not.toContain(paying.charge.id);
      expect(stdout).toMatch(
        /reconciliation: [1-9]\d* charge\(s\) left for a later run: in flight, their order still PENDING and the charge younger than 15 minutes/,
      );
    },
  );

  it(
    "npm run reconcile refuses a bad argument with one sentence and exit code 2",
    { timeout: 30_000 },
    async () => {
      for (const args of [
        ["--since", "yesterday"],
        ["--all", "--since", "2026-01-01"],
        ["--bogus"],
      ]) {
        const failed = await reconcileCommand(...args).then(
          () => null,
          (error: { code: number; stderr: string; stdout: string }) => error,
        );
        expect(failed, args.join(" ")).not.toBeNull();
        expect(failed!.code).toBe(2);
        expect(failed!.stderr).toMatch(/^reconcile: .+\.\nusage: npm run reconcile/);
        expect(failed!.stdout).toBe("");
      }
    },
  );
});

function reconcileCommand(...args: string[]) {
  return runReconcile({ databaseUrl: t.url, providerUrl: provider.url }, ...args);
}
