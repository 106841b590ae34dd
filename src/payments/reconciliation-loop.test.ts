// Reconciliation runs by itself: startPaymentJobs starts its loop, whose first round runs at once
// (then every RECONCILE_INTERVAL_MS). Nothing here calls the job: the test leaves a finding in the
// provider's records and a dead letter whose order was paid after all, starts the process's
// payment jobs, and waits for both outcomes.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { testAppWith } from "../test/app";
import { chargedTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { waitFor } from "../../tools/process";
import { startPaymentJobs } from "./index";

const t = useTestDatabase();
const provider = useTestProvider();

describe("the reconciliation loop", () => {
  it("records a finding and closes a paid dead letter without being called", async () => {
    // The worker gave up on this payment, then the charge was reported after all: DEAD, order PAID.
    const { charge, ...order } = await chargedTestOrder(t.db, provider);
    const outbox = await t.db.outboxMessage.findFirstOrThrow({
      where: { aggregateId: order.orderId },
    });
    await t.db.outboxMessage.update({
      where: { id: outbox.id },
      data: { status: "DEAD", lastError: "timed out" },
    });
    await t.db.order.update({
      where: { id: order.orderId },
      data: { status: "PAID", chargeId: charge.id },
    });
    // A charge for an order the shop no longer has (lost in a failover), a minute old: the finding.
    const lost = `ch_lost${randomUUID().replaceAll("-", "")}`;
    await provider.sql(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
       VALUES ($1, $1, $2, 500, 'EUR', 'SUCCEEDED', now() - interval '1 minute')`,
      [lost, randomUUID()],
    );

    const stop = startPaymentJobs(
      testAppWith(t.db, { PAYMENTS_PROVIDER_URL: provider.url }).payments,
    );
    try {
      const finding = await waitFor("a reconciliation finding", () =>
        t.db.reconciliationFinding.findFirst({ where: { chargeIds: { has: lost } } }),
      );
      expect(finding).toMatchObject({ kind: "CHARGE_WITHOUT_ORDER", orderId: null });
      await waitFor("the dead letter closed", () =>
        t.db.outboxMessage.findFirst({ where: { id: outbox.id, status: "DELIVERED" } }),
      );
    } finally {
      await stop();
    }
  });
});
