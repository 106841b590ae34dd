// `npm run worker` outlives its database: PostgreSQL really stopped under it (a fast shutdown, so
// its connections die), the worker says so once, stays up, and once PostgreSQL is back it pays an
// order placed after the outage. (It used to exit 0, silently: its loops' timers were unref'd.)
import { spawn, type ChildProcess } from "node:child_process";
import { rm } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../src/server/db/client";
import { placeTestOrder } from "../src/test/payment-fixtures";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { setupDatabase } from "../tools/db/setup";
import { stopChild, waitFor } from "../tools/process";

const ROOT = path.resolve(import.meta.dirname, "..");
let dataDir: string;
let server: EmbeddedServer;
let db: Db;
let url: string;

beforeAll(async () => {
  dataDir = await makeTempDataDir("once-worker-outage-");
  server = await startEmbeddedPostgres({ dataDir, persistent: true });
  await server.createDatabase("once");
  url = server.url("once");
  await setupDatabase(url, () => {}, { demo: true });
  db = createDb(url, { max: 2 });
});

afterAll(async () => {
  await db?.$disconnect();
  await server?.stop();
  if (dataDir) await rm(path.dirname(dataDir), { recursive: true, force: true });
});

describe("npm run worker while PostgreSQL is stopped", () => {
  it("stays up, says so once, and drains what is placed once PostgreSQL is back", { timeout: 120_000 }, async () => {
    const worker: ChildProcess = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts/worker.ts")], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url, DEMO_MODE: "1", OUTBOX_POLL_MS: "100", DEMO_PROVIDER_FAILURE_RATE: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    for (const stream of [worker.stdout!, worker.stderr!]) stream.on("data", (d: Buffer) => (output += d));
    try {
      await waitFor("the worker to run", () => output.includes("[worker] running"), 30_000, worker);
      const port = server.port;
      await server.stop();
      await waitFor("the worker to say the database is gone", () => output.includes("the database cannot be reached"), 30_000, worker);
      // Its loops have failed and backed off: the worker is still there.
      expect(worker.exitCode).toBeNull();
      server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
      const { orderId } = await placeTestOrder(db);
      await waitFor(
        "the order placed after the outage to be paid",
        async () => (await db.order.findUniqueOrThrow({ where: { id: orderId } })).status === "PAID",
        60_000,
        worker,
      );
      expect(await db.providerCharge.count({ where: { reference: orderId } })).toBe(1);
      expect(output.match(/the database cannot be reached/g)).toHaveLength(1);
      await waitFor("the worker to say the database is back", () => output.includes("the database is reachable again"), 30_000, worker);
    } finally {
      await stopChild(worker);
    }
    expect(output).not.toMatch(/uncaughtException|Unhandled/);
  });
});
