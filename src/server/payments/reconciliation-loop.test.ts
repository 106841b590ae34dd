// Reconciliation runs by itself: startPaymentJobs starts its loop, whose first round runs at once
// (then every interval). Nothing here calls the job: the test sets up a finding and a dead letter
// whose order was paid after all, starts the process's payment jobs, and waits for both outcomes.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { testApp } from "../../test/app";
import { placeTestOrder } from "../../test/payment-fixtures";
import { waitFor } from "../../../tools/process";
import { newProviderId } from "./provider";
import { startPaymentJobs } from "./index";

const t = useTestDatabase();

describe("the reconciliation loop", () => {
  it("records a finding and closes a paid dead letter without being called", async () => {
    const order = await placeTestOrder(t.db);
    // The worker gave up on this payment, then the charge was reported after all: DEAD, order PAID.
    const chargeId = newProviderId("ch");
    await t.db.outboxMessage.updateMany({ where: { aggregateId: order.orderId }, data: { status: "DEAD", lastError: "timed out" } });
    await t.db.order.update({ where: { id: order.orderId }, data: { status: "PAID", chargeId } });
    // A charge the provider took twice for it: the finding.
    for (const id of [chargeId, newProviderId("ch")]) {
      await t.db.providerCharge.create({
        data: { id, idempotencyKey: `key-${id}`, reference: order.orderId, amountCents: order.totalCents, currency: "EUR", status: "SUCCEEDED" },
      });
    }

    const stop = startPaymentJobs(testApp(t.db).payments);
    try {
      const finding = await waitFor("a reconciliation finding", () => t.db.reconciliationFinding.findFirst({ where: { orderId: order.orderId } }));
      expect(finding.kind).toBe("DUPLICATE_CHARGE");
      await waitFor("the dead letter closed", () => t.db.outboxMessage.findFirst({ where: { aggregateId: order.orderId, status: "DELIVERED" } }));
    } finally {
      await stop();
    }
  });
});
