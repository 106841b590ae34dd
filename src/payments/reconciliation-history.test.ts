// Reconciliation over the whole history: on a populated shop whose records are days, hours and
// seconds old (the clocks moved in the data, not by waiting), every disagreement is found by the
// job's own runs within one lap of the sweep, a change to an old order within one run, and the
// `--all` judgement finds them all at once. A pending order's charge never holds a cursor.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { chargedTestOrder, placeTestOrder } from "../test/payment-fixtures";
import { RECONCILE_INTERVAL_MS } from "./config";
import { createOutboxWorker } from "./outbox-worker";
import {
  createReconciliation,
  SWEEP_LAP_SECONDS,
  type Finding,
  type ReconciliationResult,
} from "./reconciliation";

const t = useTestDatabase();
const provider = useTestProvider();
const HOUR = 3600;
const DAY = 24 * HOUR;
/** The job as the loop runs it, at an interval that makes a lap 20 runs (slices of hours). */
const job = () =>
  createReconciliation(t.db, provider.client, {
    settleSeconds: 0,
    intervalMs: (SWEEP_LAP_SECONDS * 1000) / 20,
  });

async function paidOrders(n: number) {
  const orders = [];
  for (let i = 0; i < n; i++) orders.push(await placeTestOrder(t.db, { quantity: i + 1 }));
  const worker = createOutboxWorker(t.db, { provider: provider.client });
  while ((await worker.runOnce()).claimed > 0);
  return orders.map((o) => o.orderId);
}

/** Moves an order and its charges `seconds` into the past, on both sides. */
async function age(orderId: string, seconds: number) {
  await t.db.$executeRaw`
    UPDATE "Order" SET "createdAt" = "createdAt" - make_interval(secs => ${seconds}),
      "updatedAt" = "updatedAt" - make_interval(secs => ${seconds}) WHERE "id" = ${orderId}::uuid`;
  await provider.sql(
    `UPDATE charges SET created_at = created_at - make_interval(secs => $2) WHERE reference = $1`,
    [orderId, seconds],
  );
}

const recentCursor = async () =>
  (await t.db.reconciliationCursor.findUnique({ where: { name: "provider-charges" } }))
    ?.judgedThrough;

/** Runs the job until its sweep has walked the whole history once; every run's result. */
async function oneLap(): Promise<ReconciliationResult[]> {
  const runs: ReconciliationResult[] = [];
  const reconciliation = job();
  for (let i = 0; i < 100; i++) {
    const run = await reconciliation.runOnce();
    runs.push(run);
    if (run.sweep?.lapCompleted) return runs;
  }
  throw new Error("the sweep did not complete a lap in 100 runs");
}

const about = (orderIds: string[]) => (findings: Finding[]) =>
  findings
    .filter((f) => f.orderId !== null && orderIds.includes(f.orderId))
    .map((f) => `${f.kind} ${f.orderId}`)
    .sort();

describe("reconciliation over the whole history", () => {
  it("finds every disagreement, whatever its age, within one lap of the sweep; --all at once", async () => {
    const [healthyOld, healthyHours, chargeGone, mismatched, failed] = await paidOrders(5);
    const pendingOld = await chargedTestOrder(t.db, provider);
    const pendingFresh = await chargedTestOrder(t.db, provider);
    // Healthy orders at several ages: nothing to find.
    await age(healthyOld!, 10 * DAY);
    await age(healthyHours!, 7 * HOUR);
    // A paid order whose charge is gone from the provider's books, three days old.
    await provider.sql(
      `DELETE FROM events WHERE charge_id IN (SELECT id FROM charges WHERE reference = $1)`,
      [chargeGone],
    );
    await provider.sql(`DELETE FROM charges WHERE reference = $1`, [chargeGone]);
    await age(chargeGone!, 3 * DAY);
    // Amounts that differ, five hours old.
    await provider.sql(`UPDATE charges SET amount_cents = amount_cents + 1 WHERE reference = $1`, [
      mismatched,
    ]);
    await age(mismatched!, 5 * HOUR);
    // An order that says its payment failed while the provider took the money, two days old.
    await t.db.order.update({
      where: { id: failed },
      data: { status: "PAYMENT_FAILED", chargeId: null },
    });
    await age(failed!, 2 * DAY);
    // Orders still PENDING with a succeeded charge: one a day old (a finding), one seconds old
    // (in flight: not yet a finding, and it holds no cursor).
    await age(pendingOld.orderId, DAY);

    const mine = about([
      healthyOld!,
      healthyHours!,
      chargeGone!,
      mismatched!,
      failed!,
      pendingOld.orderId,
      pendingFresh.orderId,
    ]);
    const expected = [
      `AMOUNT_MISMATCH ${mismatched}`,
      `CHARGE_WITHOUT_ORDER ${failed}`,
      `CHARGE_WITHOUT_ORDER ${pendingOld.orderId}`,
      `PAID_ORDER_WITHOUT_CHARGE ${chargeGone}`,
    ].sort();

    const cursors: number[] = [];
    const runs = [];
    const reconciliation = job();
    for (let i = 0; i < 100; i++) {
      const run = await reconciliation.runOnce();
      runs.push(run);
      cursors.push((await recentCursor())!.getTime());
      if (run.sweep?.lapCompleted) break;
    }
    expect(runs.at(-1)!.sweep!.lapCompleted).toBe(true);
    // History ten days deep is walked in slices, not at once.
    expect(runs.length).toBeGreaterThan(5);
    expect(
      mine(runs.flatMap((r) => r.findings)).filter((f, i, all) => all.indexOf(f) === i),
    ).toEqual(expected);
    // The pending orders held nothing: the recent cursor moved on every run, past their charges.
    for (let i = 1; i < cursors.length; i++) expect(cursors[i]).toBeGreaterThan(cursors[i - 1]!);
    const [freshCharge] = await provider.charges(pendingFresh.orderId);
    expect(cursors.at(-1)).toBeGreaterThan(freshCharge!.createdAt.getTime());
    const recorded = await t.db.reconciliationFinding.findMany({
      where: { orderId: { in: [chargeGone!, mismatched!, failed!, pendingOld.orderId] } },
    });
    expect(recorded.map((f) => `${f.kind} ${f.orderId}`).sort()).toEqual(expected);

    // --all: the whole history judged in one go finds them all (recorded already: none new).
    const all = await job().runSince();
    expect(mine(all.findings)).toEqual(expected);
    expect(all.recorded).toBe(0);
    // --since: what changed in the last six hours only.
    const since = await job().runSince(new Date(Date.now() - 6 * HOUR * 1000));
    expect(mine(since.findings)).toEqual([`AMOUNT_MISMATCH ${mismatched}`]);
  });

  it("judges an old order within one run of its change, wherever the sweep is", async () => {
    const [order] = await paidOrders(1);
    await age(order!, 4 * DAY);
    await oneLap(); // nothing to find about it, and the sweep is back at the start of history
    const settledAt = await recentCursor();
    // Days later, its status is set to failed: the provider holds its (days old) charge.
    await t.db.order.update({ where: { id: order }, data: { status: "PAYMENT_FAILED" } });
    const run = await job().runOnce();
    const created = (await t.db.order.findUniqueOrThrow({ where: { id: order } })).createdAt;
    // Not the sweep's doing: its slice is elsewhere in history.
    expect(run.sweep!.from > created || run.sweep!.until <= created).toBe(true);
    expect(about([order!])(run.findings)).toEqual([`CHARGE_WITHOUT_ORDER ${order}`]);
    expect((await recentCursor())!.getTime()).toBeGreaterThan(settledAt!.getTime());
  });

  it("a charge for an order the shop lost, days old, is found by the sweep", async () => {
    const lost = randomUUID();
    await provider.sql(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
       VALUES ($1, $1, $2, 900, 'EUR', 'SUCCEEDED', now() - interval '6 days')`,
      [`ch_lost${randomUUID().replaceAll("-", "")}`, lost],
    );
    const found = (await oneLap()).flatMap((r) => r.findings);
    expect(found).toContainEqual(
      expect.objectContaining({
        kind: "CHARGE_WITHOUT_ORDER",
        details: expect.objectContaining({ reference: lost }),
      }),
    );
  });

  it("the job at its default interval finds disagreements 10 minutes, 4 hours and 60 days old within 15 minutes of runs", async () => {
    // The job as the server runs it: default interval and settling time.
    const reconciliation = createReconciliation(t.db, provider.client, {
      intervalMs: RECONCILE_INTERVAL_MS,
    });
    await reconciliation.runOnce();
    // Charges for orders the shop lost, written behind the recent pass's back (restored provider
    // records, say): their creation times are in the past, the clocks moved in the data.
    const ages = [10 * 60, 4 * HOUR, 60 * DAY];
    const lost = ages.map(() => `ch_late${randomUUID().replaceAll("-", "")}`);
    for (const [i, id] of lost.entries())
      await provider.sql(
        `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
         VALUES ($1, $1, $2, 700, 'EUR', 'SUCCEEDED', now() - make_interval(secs => $3))`,
        [id, randomUUID(), ages[i]],
      );
    const found = () =>
      t.db.reconciliationFinding.findMany({
        where: { kind: "CHARGE_WITHOUT_ORDER", chargeIds: { hasSome: lost } },
      });
    // Fifteen minutes of the job: as many runs as its interval fits in them.
    const runs = Math.floor((15 * 60_000) / RECONCILE_INTERVAL_MS);
    let ran = 0;
    while (ran < runs && (await found()).length < lost.length) {
      await reconciliation.runOnce();
      ran++;
    }
    expect((await found()).flatMap((f) => f.chargeIds).sort()).toEqual([...lost].sort());
    // Behind the recent pass: the sweep found them, not the first run after they were written.
    expect(ran).toBeGreaterThan(1);
  });
});
