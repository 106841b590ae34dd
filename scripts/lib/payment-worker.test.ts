// `npm start`'s payment worker: killed for real (SIGKILL), it is started again; stopped with the
// server, it is gone.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { isProcessAlive } from "../../tools/db/postmaster";
import { useTestDatabase } from "../../src/test/database";
import { supervisePaymentWorker } from "./payment-worker";

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
