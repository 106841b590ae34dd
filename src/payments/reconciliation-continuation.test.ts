// A run the budget stops goes on where it stopped: with a budget of one page of the recent list
// per run, 250 paid orders with their charges (and two disagreements among them) are judged over
// several runs, each starting at the second the last one stopped at. Nothing is skipped (both
// disagreements are found), nothing is reported that is only past the cut (no paid order "without
// a charge" because its charge was on the next page), and every run moves on.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { DEFAULT_RECONCILE_BUDGET } from "./config";
import { createReconciliation, type Finding } from "./reconciliation";

const t = useTestDatabase();
const provider = useTestProvider();

describe("a run the budget stops", () => {
  it("is continued by the next run from where it stopped, until the whole window is judged", async () => {
    const batch = randomUUID();
    // Orders i = 1…250, paid, 12 s apart over the last 50 minutes; charge i a moment before order i
    // is recorded paid. Order 200 was recorded paid with a charge the provider does not hold; the
    // provider holds a charge (after order 130's) for an order the shop does not have.
    await t.db.$executeRaw`
      INSERT INTO "Order" ("id", "tenantId", "userId", "status", "totalCents", "currency", "idempotencyKey", "intentKey", "chargeId", "createdAt", "updatedAt")
      SELECT md5(${batch} || i)::uuid, 'acme', (SELECT "id" FROM "User" WHERE "tenantId" = 'acme' LIMIT 1), 'PAID', 1900, 'EUR',
             ${batch} || i, ${batch} || i, 'ch_' || md5(${batch} || 'c' || i), at - interval '1 second', at + interval '100 milliseconds'
      FROM generate_series(1, 250) AS i, LATERAL (SELECT now() - interval '50 minutes' + interval '12 seconds' * i AS at) AS a`;
    await provider.sql(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
       SELECT 'ch_' || md5($1 || 'c' || i), $1 || i, md5($1 || i)::uuid::text, 1900, 'EUR', 'SUCCEEDED', at
       FROM generate_series(1, 250) AS i, LATERAL (SELECT now() - interval '50 minutes' + interval '12 seconds' * i AS at) AS a
       WHERE i <> 200
       UNION ALL
       SELECT 'ch_ghost_' || md5($1), $1 || 'ghost', $2, 500, 'EUR', 'SUCCEEDED', now() - interval '50 minutes' + interval '12 seconds' * 130.5`,
      [batch, randomUUID()],
    );

    // The recent pass judged everything up to 52 minutes ago.
    await t.db.reconciliationCursor.create({
      data: { name: "provider-charges", judgedThrough: new Date(Date.now() - 52 * 60_000) },
    });
    // Three pages a run: one for the provider's oldest charge, one for the recent list (90 % of
    // three, less the one spent), one for looking up an order's charge, none for the sweep.
    const reconciliation = createReconciliation(t.db, provider.client, {
      settleSeconds: 0,
      budget: { ...DEFAULT_RECONCILE_BUDGET, maxPages: 3 },
    });
    const findings: Finding[] = [];
    const stops: Date[] = [];
    for (let run = 0; run < 10; run++) {
      const result = await reconciliation.runOnce();
      findings.push(...result.findings);
      if (!result.continueFrom) break;
      expect(result.budget.stopped?.reason).toBe("pages");
      expect(result.unjudgedOrders).toBe(0);
      stops.push(result.continueFrom);
    }

    // It took several runs, each going on from a later second than the last.
    expect(stops.length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < stops.length; i++)
      expect(stops[i]!.getTime()).toBeGreaterThan(stops[i - 1]!.getTime());
    // (The file's database holds nothing else to find: every finding is one of these two.)
    const kinds = new Map(findings.map((f) => [f.dedupeKey, f]));
    expect([...kinds.values()].map((f) => f.kind).sort()).toEqual([
      "CHARGE_WITHOUT_ORDER",
      "PAID_ORDER_WITHOUT_CHARGE",
    ]);
    const [paidWithout] = await t.db.$queryRaw<{ id: string }[]>`
      SELECT "id"::text FROM "Order" WHERE "idempotencyKey" = ${`${batch}200`}`;
    expect([...kinds.values()].find((f) => f.kind === "PAID_ORDER_WITHOUT_CHARGE")?.orderId).toBe(
      paidWithout!.id,
    );
  });
});
