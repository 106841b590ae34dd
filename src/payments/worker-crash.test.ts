// The worker really crashes (SIGKILL, from inside, right after the provider charged and before the
// row was marked delivered). A restarted worker process retries under the same provider key:
// the order ends up paid and the provider holds exactly one charge.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { placeTestOrder } from "../test/payment-fixtures";
import { useTestProvider } from "../test/provider";
import { waitFor } from "../../tools/process";

const t = useTestDatabase();
const provider = useTestProvider();
const root = path.resolve(import.meta.dirname, "../..");

/** `npm run worker`'s process; `crashing`: the one that dies after the charge. */
function startWorker(crashing: boolean): ChildProcess {
  const script = crashing ? "src/test/crashing-worker.ts" : "scripts/worker.ts";
  // `node --import tsx`, not the tsx CLI: the CLI runs the script in a child of its own, and the
  // test must signal, and see the death of, the worker process itself.
  return spawn(process.execPath, ["--import", "tsx", path.join(root, script)], {
    cwd: root,
    // A 1 s lease so the restarted worker may take the dead one's row over within the test.
    env: {
      ...process.env,
      DATABASE_URL: t.url,
      DEMO_MODE: "1",
      OUTBOX_LEASE_MS: "1000",
      OUTBOX_POLL_MS: "100",
      PAYMENTS_PROVIDER_URL: provider.url,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * The child's exit; if it has not exited within `ms`, it is killed and the test fails saying so.
 */
async function exitOf(
  child: ChildProcess,
  ms = 20_000,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  try {
    const [code, signal] = (await once(child, "exit", { signal: AbortSignal.timeout(ms) })) as [
      number | null,
      NodeJS.Signals | null,
    ];
    return { code, signal };
  } catch (error) {
    child.kill("SIGKILL");
    throw new Error(`the worker (pid ${child.pid}) did not exit within ${ms} ms`, { cause: error });
  }
}

describe("worker crash between charge and delivery", () => {
  it(
    "after a restart the order is paid and the provider holds exactly one charge",
    { timeout: 60_000 },
    async () => {
      const { orderId } = await placeTestOrder(t.db);

      const crashing = startWorker(true);
      let crashLog = "";
      crashing.stderr!.on("data", (chunk: Buffer) => (crashLog += chunk.toString()));
      const crashed = await exitOf(crashing);
      expect(crashed.signal, crashLog).toBe("SIGKILL");

      // The provider charged; the worker recorded nothing.
      const charges = await provider.charges(orderId);
      expect(charges).toHaveLength(1);
      const stranded = await t.db.outboxMessage.findFirstOrThrow({
        where: { aggregateId: orderId },
      });
      expect(stranded).toMatchObject({
        status: "PENDING",
        attempts: 1,
        result: null,
        deliveredAt: null,
      });
      expect(stranded.lockedUntil).not.toBeNull();

      const restarted = startWorker(false);
      try {
        const delivered = await waitFor("the outbox row to be delivered", async () => {
          const row = await t.db.outboxMessage.findFirstOrThrow({
            where: { aggregateId: orderId },
          });
          return row.status === "DELIVERED" ? row : null;
        });
        expect(delivered).toMatchObject({
          attempts: 2,
          result: { chargeId: charges[0]!.id, replayed: true },
        });
      } finally {
        restarted.kill("SIGTERM");
      }
      // SIGTERM is a graceful stop: the round in progress finishes, the process exits 0.
      expect(await exitOf(restarted)).toEqual({ code: 0, signal: null });

      expect(await provider.charges(orderId)).toHaveLength(1);
      expect(await provider.charges()).toHaveLength(1);
      expect(await t.db.order.findUniqueOrThrow({ where: { id: orderId } })).toMatchObject({
        status: "PAID",
        chargeId: charges[0]!.id,
      });
    },
  );
});
