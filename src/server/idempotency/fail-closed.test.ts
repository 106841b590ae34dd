// Fail closed: with PostgreSQL really stopped, a mutation answers 503 + Retry-After and its handler
// never runs; once PostgreSQL is back, the same key executes normally. This file starts its own
// PostgreSQL server so it can stop it without disturbing the other test files.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDb, type Db } from "../db/client";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../db/embedded";
import { setupDatabase } from "../db/setup";
import { ENTRY_POINTS, EFFECTS_TABLE_SQL, effectsFor, executions, Gate, keyRow, parkNextExecution, reasonOf } from "../../test/engine-harness";

let server: EmbeddedServer;
let dataDir: string;
let port: number;
let db: Db;

async function startServer() {
  server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
}

beforeAll(async () => {
  dataDir = await makeTempDataDir("once-failclosed-");
  await startServer();
  port = server.port;
  await server.createDatabase("once");
  await setupDatabase(server.url("once"));
  db = createDb(server.url("once"), { max: 4 });
  await db.$executeRawUnsafe(EFFECTS_TABLE_SQL);
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await server?.stop();
});

describe.each(ENTRY_POINTS)("fail closed, through the $name", (entry) => {
  it("answers 503 store_unavailable with Retry-After while PostgreSQL is down, and never runs the handler", async () => {
    const id = entry.name.replace(/\W+/g, "-");
    const key = `down-${id}`;
    const value = `down-value-${id}`;
    // The tRPC entry authenticates first (a database read too): the 503 comes from there or from
    // the engine's reservation, but always before any business logic.
    expect((await entry.call(db, { key: `warm-${id}`, input: { value: `warm-${id}` } })).status).toBe(200);

    await server.stop();
    const before = executions.count;
    const down = await entry.call(db, { key, input: { value } });
    expect(down.status).toBe(503);
    expect(reasonOf(down)).toBe("store_unavailable");
    expect(Number(down.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(executions.count).toBe(before);

    await startServer();
    const back = await entry.call(db, { key, input: { value } });
    expect(back).toMatchObject({ status: 200, replayed: false });
    expect(await effectsFor(db, value)).toBe(1);
    const replay = await entry.call(db, { key, input: { value } });
    expect(replay).toMatchObject({ status: 200, replayed: true, body: back.body });
  });

  it("answers 503 when PostgreSQL dies mid-request; nothing was committed, and the key is taken over once it is back", async () => {
    process.env.IDEMPOTENCY_LEASE_MS = "300";
    try {
      const id = entry.name.replace(/\W+/g, "-");
      const key = `midway-${id}`;
      const value = `midway-value-${id}`;
      const gate = new Gate();
      parkNextExecution(gate);
      const inFlight = entry.call(db, { key, input: { value } });
      await gate.reached; // the business write is done, not committed
      await server.stop(); // a fast shutdown: open transactions are aborted
      gate.open();
      const answer = await inFlight;
      expect(answer.status).toBe(503);
      expect(reasonOf(answer)).toBe("store_unavailable");

      await startServer();
      expect(await effectsFor(db, value)).toBe(0);
      // The release could not reach the store either: the key waits out its lease, then a retry
      // takes it over and runs once.
      await vi.waitFor(
        async () => {
          const [row] = await db.$queryRaw<{ expired: boolean }[]>`
            SELECT "leaseExpiresAt" <= now() AS "expired" FROM "IdempotencyKey" WHERE "scope" = 'acme' AND "key" = ${key}`;
          expect(row?.expired).toBe(true);
        },
        { timeout: 5_000, interval: 50 },
      );
      const retry = await entry.call(db, { key, input: { value } });
      expect(retry).toMatchObject({ status: 200, replayed: false });
      expect(await effectsFor(db, value)).toBe(1);
      expect(await keyRow(db, "acme", key)).toMatchObject({ status: "COMPLETED", attempts: 2 });
    } finally {
      delete process.env.IDEMPOTENCY_LEASE_MS;
    }
  });
});
