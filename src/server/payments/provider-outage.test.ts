// The shop reaches the provider only over HTTP. With the provider stopped, the real payment loop
// keeps the orders waiting (retried, never dead, never paid on a guess); once the provider is back
// they are charged, each once.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { testAppWith } from "../../test/app";
import { placeTestOrder } from "../../test/payment-fixtures";
import { useTestProvider } from "../../test/provider";
import { waitFor } from "../../../tools/process";
import { startPaymentJobs } from "./index";

const t = useTestDatabase();
const provider = useTestProvider();

describe("the provider stopped", () => {
  it(
    "orders wait, nothing is lost, and they are charged once it is back",
    { timeout: 90_000 },
    async () => {
      const app = testAppWith(t.db, {
        PAYMENTS_PROVIDER_URL: provider.url,
        OUTBOX_POLL_MS: "100",
        OUTBOX_MAX_BACKOFF_MS: "2000",
      });
      await provider.stop();
      const orders = await Promise.all([1, 2, 3].map(() => placeTestOrder(t.db)));
      const ids = orders.map((o) => o.orderId);
      const stop = startPaymentJobs(app.payments);
      try {
        // Every row tried and refused at least once: the worker ran, and the provider was not
        // there.
        const waiting = await waitFor(
          "every payment tried while the provider is down",
          async () => {
            const rows = await t.db.outboxMessage.findMany({ where: { aggregateId: { in: ids } } });
            return rows.every(
              (r) => r.attempts >= 1 && r.lastError?.includes("ProviderUnavailableError"),
            )
              ? rows
              : null;
          },
        );
        expect(waiting.map((r) => r.status)).toEqual(["PENDING", "PENDING", "PENDING"]);
        expect(
          await t.db.order.findMany({ where: { id: { in: ids } }, select: { status: true } }),
        ).toEqual(ids.map(() => ({ status: "PENDING" })));

        await provider.start();
        await waitFor(
          "every order paid",
          async () =>
            (await t.db.order.count({ where: { id: { in: ids }, status: "PAID" } })) === ids.length,
          60_000,
        );
      } finally {
        await stop();
      }
      for (const id of ids) {
        const charges = await provider.charges(id);
        expect(charges).toHaveLength(1);
        expect(await t.db.order.findUniqueOrThrow({ where: { id } })).toMatchObject({
          status: "PAID",
          chargeId: charges[0]!.id,
        });
      }
    },
  );
});
