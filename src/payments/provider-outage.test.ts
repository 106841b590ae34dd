// The shop reaches the provider only over HTTP. With the provider stopped, the real payment loop
// keeps the orders waiting (retried, never dead, never paid on a guess); once the provider is back
// they are charged, each once.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { testAppWith } from "../test/app";
import { placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { waitFor } from "../../tools/process";
import { startPaymentJobs } from "./index";
import type { WorkerLogger } from "./outbox-worker";

/** A logger that keeps every line the worker writes, with its level. */
function capturingLogger() {
  const lines: {
    level: "debug" | "info" | "warn";
    fields: Record<string, unknown>;
    message: string;
  }[] = [];
  const at = (level: "debug" | "info" | "warn") => (fields: object, message: string) =>
    void lines.push({ level, fields: fields as Record<string, unknown>, message });
  const logger: WorkerLogger = { debug: at("debug"), info: at("info"), warn: at("warn") };
  return { logger, lines };
}

const t = useTestDatabase();
const provider = useTestProvider();

/** Waits (up to a minute) until every one of `ids` is paid. */
async function everyOrderPaid(ids: string[]): Promise<void> {
  await waitFor(
    "every order paid",
    async () =>
      (await t.db.order.count({ where: { id: { in: ids }, status: "PAID" } })) === ids.length,
    60_000,
  );
}

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
        await everyOrderPaid(ids);
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

describe("an outage told as an outage", () => {
  it(
    "many orders during a real provider stop: one line when it becomes unreachable, one when it is back, the attempts at debug level",
    { timeout: 120_000 },
    async () => {
      const app = testAppWith(t.db, {
        PAYMENTS_PROVIDER_URL: provider.url,
        OUTBOX_POLL_MS: "100",
        OUTBOX_MAX_BACKOFF_MS: "2000",
        // Retries every 1–2 s: enough attempts that no row is dead-lettered while the test waits.
        OUTBOX_MAX_ATTEMPTS: "1000",
      });
      const { logger, lines } = capturingLogger();
      const said = (level: string, pattern: RegExp) =>
        lines.filter((l) => l.level === level && pattern.test(l.message));
      await provider.stop();
      const orders = await Promise.all(Array.from({ length: 30 }, () => placeTestOrder(t.db)));
      const ids = orders.map((o) => o.orderId);
      const stop = startPaymentJobs(app.payments, { logger });
      try {
        await waitFor(
          "the provider said unreachable, every payment tried at least twice",
          async () =>
            said("warn", /cannot be reached/).length === 1 &&
            (await t.db.outboxMessage.count({
              where: { aggregateId: { in: ids }, attempts: { gte: 2 } },
            })) === ids.length,
          60_000,
        );
        await provider.start();
        await everyOrderPaid(ids);
      } finally {
        await stop();
      }
      const down = said("warn", /cannot be reached/);
      const back = said("info", /reachable again/);
      expect(down).toHaveLength(1);
      expect(down[0]!.message).toContain("ECONNREFUSED");
      expect(back).toHaveLength(1);
      expect(back[0]!.fields).toMatchObject({ provider: "reachable", waitedSends: ids.length });
      expect(back[0]!.fields.downForSeconds).toBeGreaterThanOrEqual(5);
      // Nothing else above debug: no line per attempt per order.
      expect(lines.filter((l) => l.level !== "debug")).toEqual([down[0], back[0]]);
      expect(
        said("debug", /attempt \d+: payment provider unreachable/).length,
      ).toBeGreaterThanOrEqual(2 * ids.length);
    },
  );
});
