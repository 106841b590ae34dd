// `npm run worker` outlives its database: PostgreSQL really stopped under it (a fast shutdown, so
// its connections die), the worker says so once, stays up, and once PostgreSQL is back it pays an
// order placed after the outage. (It used to exit 0, silently: its loops' timers were unref'd.)
import { describe, expect, it } from "vitest";
import { useOwnPostgres } from "../src/test/own-postgres";
import { placeTestOrder } from "../src/test/payment-fixtures";
import { useTestProvider } from "../src/test/provider";
import { startWorker } from "../src/test/worker-process";
import { stopChild, waitFor } from "../tools/process";

const pg = useOwnPostgres({ prefix: "once-worker-outage-", poolMax: 2 });
// The provider's books are on the run's PostgreSQL, not the one this test stops.
const provider = useTestProvider();

describe("npm run worker while PostgreSQL is stopped", () => {
  it(
    "stays up, says so once, and drains what is placed once PostgreSQL is back",
    { timeout: 120_000 },
    async () => {
      const worker = await startWorker(
        {
          ...process.env,
          DATABASE_URL: pg.url,
          DEMO_MODE: "1",
          OUTBOX_POLL_MS: "100",
          PAYMENTS_PROVIDER_URL: provider.url,
        },
        30_000,
      );
      try {
        await pg.stop();
        await waitFor(
          "the worker to say the database is gone",
          () => worker.output().includes("the database cannot be reached"),
          30_000,
          worker.child,
        );
        // Its loops have failed and backed off: the worker is still there.
        expect(worker.child.exitCode).toBeNull();
        await pg.start();
        const { orderId } = await placeTestOrder(pg.db);
        await waitFor(
          "the order placed after the outage to be paid",
          async () =>
            (await pg.db.order.findUniqueOrThrow({ where: { id: orderId } })).status === "PAID",
          60_000,
          worker.child,
        );
        expect(await provider.charges(orderId)).toHaveLength(1);
        expect(worker.output().match(/the database cannot be reached/g)).toHaveLength(1);
        await waitFor(
          "the worker to say the database is back",
          () => worker.output().includes("the database is reachable again"),
          30_000,
          worker.child,
        );
      } finally {
        await stopChild(worker.child);
      }
      expect(worker.output()).not.toMatch(/uncaughtException|Unhandled/);
    },
  );
});
