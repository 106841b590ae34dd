// Reconciliation compares the provider's books with the orders and records each finding once.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createOutboxWorker } from "./outbox-worker";
import { newProviderId, SimulatedProvider } from "./provider";
import { runReconciliation } from "./reconciliation";
import { placeTestOrder } from "../../test/payment-fixtures";

const t = useTestDatabase();

async function paidOrders(n: number) {
  const orders = [];
  for (let i = 0; i < n; i++) orders.push(await placeTestOrder(t.db, { quantity: i + 1 }));
  const worker = createOutboxWorker(t.db, { provider: new SimulatedProvider(t.db) });
  while ((await worker.runOnce()).claimed > 0);
  return orders;
}

describe("reconciliation", () => {
  it("finds nothing when every paid order has exactly its one charge", async () => {
    await paidOrders(3);
    expect(await runReconciliation(t.db)).toEqual({ findings: [], recorded: 0, closedDeadLetters: 0 });
    expect(await t.db.reconciliationFinding.count()).toBe(0);
  });

  it("finds a duplicate charge planted in the provider's table, once", async () => {
    const [order] = await paidOrders(1);
    const first = await t.db.providerCharge.findFirstOrThrow({ where: { reference: order!.orderId } });
    const planted = await t.db.providerCharge.create({ data: { ...first, id: newProviderId("ch"), createdAt: undefined } });

    const run = await runReconciliation(t.db);
    expect(run.recorded).toBe(1);
    expect(run.findings).toEqual([expect.objectContaining({ kind: "DUPLICATE_CHARGE", orderId: order!.orderId, chargeIds: [first.id, planted.id].sort() })]);
    expect(await runReconciliation(t.db)).toMatchObject({ recorded: 0 });
    const stored = await t.db.reconciliationFinding.findMany();
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ kind: "DUPLICATE_CHARGE", orderId: order!.orderId });
    await t.db.providerCharge.delete({ where: { id: planted.id } });
  });

  it("finds a charge without order, a paid order without charge and an amount mismatch", async () => {
    const [paidNoCharge, mismatched] = await paidOrders(2);
    await t.db.providerCharge.deleteMany({ where: { reference: paidNoCharge!.orderId } });
    await t.db.providerCharge.updateMany({ where: { reference: mismatched!.orderId }, data: { amountCents: { increment: 1 } } });
    const stray = await t.db.providerCharge.create({
      data: { id: newProviderId("ch"), idempotencyKey: "stray", reference: "no-such-order", amountCents: 500, currency: "EUR", status: "SUCCEEDED" },
    });

    const { findings, recorded } = await runReconciliation(t.db);
    const kinds = findings.map((f) => f.kind).sort();
    // The previous test removed its planted duplicate: only this test's three findings remain.
    expect(kinds).toEqual(["AMOUNT_MISMATCH", "CHARGE_WITHOUT_ORDER", "PAID_ORDER_WITHOUT_CHARGE"]);
    expect(recorded).toBe(3);
    expect(findings.find((f) => f.kind === "CHARGE_WITHOUT_ORDER")).toMatchObject({ chargeIds: [stray.id], orderId: null });
    expect(findings.find((f) => f.kind === "PAID_ORDER_WITHOUT_CHARGE")).toMatchObject({ orderId: paidNoCharge!.orderId });
    expect(findings.find((f) => f.kind === "AMOUNT_MISMATCH")).toMatchObject({ orderId: mismatched!.orderId });
    expect(await runReconciliation(t.db)).toMatchObject({ recorded: 0 });
    expect(await t.db.reconciliationFinding.count()).toBe(4);
  });

  it("npm run reconcile prints the findings and records nothing twice", { timeout: 30_000 }, async () => {
    const root = path.resolve(import.meta.dirname, "../../..");
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", path.join(root, "scripts/reconcile.ts")], {
      cwd: root,
      env: { ...process.env, DATABASE_URL: t.url, DEMO_MODE: "1" },
    });
    expect(stdout).toContain("AMOUNT_MISMATCH");
    expect(stdout).toContain("reconciliation: 3 finding(s), 0 new");
    expect(await t.db.reconciliationFinding.count()).toBe(4);
  });
});
