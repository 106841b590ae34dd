// `npm start`'s payment worker: killed for real (SIGKILL), it is started again; stopped with the
// server, it is gone.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../tools/process";
import { useTestDatabase } from "../../src/test/database";
import { MAX_QUICK_CRASHES, supervisePaymentWorker } from "./payment-worker";

const t = useTestDatabase({ poolMax: 1 });
const ROOT = path.resolve(import.meta.dirname, "../..");

describe("the supervised payment worker", () => {
  it("is started again after a SIGKILL, and stopped with the server", async () => {
    const started: number[] = [];
    let wake = () => {};
    const nthStart = async (n: number) => {
      while (started.length < n) await new Promise<void>((resolve) => (wake = resolve));
    };
    const worker = supervisePaymentWorker(ROOT, {
      env: { ...process.env, DATABASE_URL: t.url, DEMO_MODE: "1" },
      stdio: "ignore",
      onStart: (pid) => {
        started.push(pid);
        wake();
      },
    });
    try {
      await nthStart(1);
      const first = started[0]!;
      process.kill(first, "SIGKILL");
      await nthStart(2);
      expect(started[1]).not.toBe(first);
      expect(isProcessAlive(started[1]!)).toBe(true);
    } finally {
      await worker.stop();
    }
    expect(started.every((pid) => !isProcessAlive(pid))).toBe(true);
    expect(started).toHaveLength(2); // a stopped worker is not started again
  });
});

describe("a worker that cannot start", () => {
  it(
    "is restarted with a growing wait, then given up on with a sentence, not restarted for ever",
    { timeout: 90_000 },
    async () => {
      const started: number[] = [];
      let gaveUp!: (reason: string) => void;
      const givenUp = new Promise<string>((resolve) => (gaveUp = resolve));
      // A configuration the worker refuses at start-up: it exits at once, every time.
      const worker = supervisePaymentWorker(ROOT, {
        env: { ...process.env, DATABASE_URL: t.url, DEMO_MODE: "0", PAYMENTS_WEBHOOK_SECRET: "" },
        stdio: "ignore",
        restartDelayMs: 20,
        onStart: (pid) => started.push(pid),
        onGiveUp: gaveUp,
      });
      try {
        expect(await givenUp).toMatch(/exited \(1\) 5 times in a row .* not restarting it/);
        expect(started).toHaveLength(MAX_QUICK_CRASHES);
      } finally {
        await worker.stop();
      }
    },
  );
});
