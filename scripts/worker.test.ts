// `npm run worker` outlives its database: PostgreSQL really stopped under it (a fast shutdown, so
// its connections die), the worker says so once, stays up, and once PostgreSQL is back it pays an
// order placed after the outage. (It used to exit 0, silently: its loops' timers were unref'd.)
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useOwnPostgres } from "../src/test/own-postgres";
import { placeTestOrder } from "../src/test/payment-fixtures";
import { useTestProvider } from "../src/test/provider";
import { stopChild, waitFor } from "../tools/process";

const ROOT = path.resolve(import.meta.dirname, "..");
const pg = useOwnPostgres({ prefix: "once-worker-outage-", poolMax: 2 });
// The provider's books are on the run's PostgreSQL, not the one this test stops.
const provider = useTestProvider();

describe("npm run worker while PostgreSQL is stopped", () => {
  it(
    "stays up, says so once, and drains what is placed once PostgreSQL is back",
    { timeout: 120_000 },
    async () => {
      const worker: ChildProcess = spawn(
        process.execPath,
        ["--import", "tsx", path.join(ROOT, "scripts/worker.ts")],
        {
          cwd: ROOT,
          env: {
            ...process.env,
            DATABASE_URL: pg.url,
            DEMO_MODE: "1",
            OUTBOX_POLL_MS: "100",
            PAYMENTS_PROVIDER_URL: provider.url,
          },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let output = "";
      for (const stream of [worker.stdout!, worker.stderr!])
        stream.on("data", (d: Buffer) => (output += d));
      try {
        await waitFor(
          "the worker to run",
          () => output.includes("[worker] running"),
          30_000,
          worker,
        );
        await pg.stop();
        await waitFor(
          "the worker to say the database is gone",
          () => output.includes("the database cannot be reached"),
          30_000,
          worker,
        );
        // Its loops have failed and backed off: the worker is still there.
        expect(worker.exitCode).toBeNull();
        await pg.start();
        const { orderId } = await placeTestOrder(pg.db);
        await waitFor(
          "the order placed after the outage to be paid",
          async () =>
            (await pg.db.order.findUniqueOrThrow({ where: { id: orderId } })).status === "PAID",
          60_000,
          worker,
        );
        expect(await provider.charges(orderId)).toHaveLength(1);
        expect(output.match(/the database cannot be reached/g)).toHaveLength(1);
        await waitFor(
          "the worker to say the database is back",
          () => output.includes("the database is reachable again"),
          30_000,
          worker,
        );
      } finally {
        await stopChild(worker);
      }
      expect(output).not.toMatch(/uncaughtException|Unhandled/);
    },
  );
});
