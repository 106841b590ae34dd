// Issue 19: the production build runs what the unit tests prove. Two `next start` instances of the
// real build share one PostgreSQL that logs every statement (log_statement=all), so the specs see
// what the server really sends: a replay answered from memory, the engine's own prepared
// reservation, the engine's refusals with their status, counters written by the flush (not by a
// scrape), a bust on one instance heard by the other, counters kept through a graceful stop, and a
// server that outlives a PostgreSQL killed with SIGKILL under load.
import { randomBytes, randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { expect, test } from "@playwright/test";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../tools/db/embedded";
import { findPostmaster } from "../tools/db/postmaster";
import { isProcessAlive, waitFor } from "../tools/process";
import { setupDatabase } from "../tools/db/setup";
import { startNextInstance, type NextInstance } from "../tools/next/instance";

test.describe.configure({ mode: "serial" });

let dataDir: string;
let database: EmbeddedServer;
let port: number;
let databaseUrl: string;
let statements = "";
let a: NextInstance;
let b: NextInstance;
let sql: pg.Pool;
let productId: string;

const startDatabase = () =>
  startEmbeddedPostgres({
    dataDir,
    port,
    persistent: true,
    settings: { log_statement: "all" },
    onLog: (m) => (statements += `${String(m)}\n`),
  });

/** What every instance gets: demo mode (the demo tokens), the payment loops elsewhere. */
function instanceEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    DEMO_MODE: "1",
    PAYMENTS_WEBHOOK_SECRET: randomBytes(24).toString("hex"),
    ONCE_PAYMENT_JOBS: "0",
    NEXT_MANUAL_SIG_HANDLE: "1",
    ...extra,
  };
}

test.beforeAll(async () => {
  test.setTimeout(180_000);
  dataDir = await makeTempDataDir("once-e2e-wiring-");
  database = await startEmbeddedPostgres({ dataDir, persistent: true });
  port = database.port;
  await database.createDatabase("once");
  databaseUrl = database.url("once");
  await setupDatabase(databaseUrl, () => {}, { demo: true });
  await database.stop();
  database = await startDatabase();
  sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  sql.on("error", () => {});
  await sql.query(`UPDATE "Product" SET "stock" = 1000000`);
  productId = (
    await sql.query<{ id: string }>(`SELECT "id" FROM "Product" WHERE "sku" = 'MUG-001'`)
  ).rows[0]!.id;
  [a, b] = await Promise.all([startNextInstance(instanceEnv()), startNextInstance(instanceEnv())]);
});

test.afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await sql?.end();
  await database?.stop();
  if (dataDir) rmSync(path.dirname(dataDir), { recursive: true, force: true });
});

function checkout(
  on: NextInstance,
  key: string,
  token = "acme_demo_token",
  extra: Record<string, string> = {},
) {
  return fetch(`${on.baseURL}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      "idempotency-key": key,
      ...extra,
    },
    body: JSON.stringify({ items: [{ productId, quantity: 1 }] }),
  });
}

/**
 * The statements PostgreSQL logged while `work` ran. PostgreSQL writes its log asynchronously to
 * us, so a marker statement sent after the work closes the window: once the marker is in the log,
 * everything before it is too.
 */
async function statementsDuring(work: () => Promise<void>): Promise<string> {
  const from = statements.length;
  await work();
  const marker = `window-closed-${randomUUID()}`;
  await sql.query(`SELECT '${marker}'`);
  await waitFor("the marker statement in PostgreSQL's log", () => statements.includes(marker));
  return statements.slice(from, statements.indexOf(marker));
}

const count = (text: string, pattern: RegExp) =>
  text.match(new RegExp(pattern.source, "g"))?.length ?? 0;

async function executedCount(scope: string): Promise<number> {
  const { rows } = await sql.query<{ n: string | null }>(
    `SELECT sum("count") AS n FROM "IdempotencyCounter" WHERE "scope" = $1 AND "event" = 'executed'`,
    [scope],
  );
  return Number(rows[0]!.n ?? 0);
}

test("a checkout and five retries run one reservation, the engine's prepared one; the retries are answered from memory", async () => {
  const key = randomUUID();
  let first = "";
  const firstLog = await statementsDuring(async () => {
    const res = await checkout(a, key);
    expect(res.status).toBe(200);
    first = await res.text();
  });
  // The reservation goes through the engine's own prepared statement on the pg pool, not Prisma.
  expect(count(firstLog, /execute once_reserve_[0-9a-f]{12}:/)).toBe(1);
  const replays: Response[] = [];
  const retriesLog = await statementsDuring(async () => {
    for (let i = 0; i < 5; i++) replays.push(await checkout(a, key));
  });
  for (const replay of replays) {
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(first);
  }
  // The five retries touch no key: no reservation, no read, by any statement name.
  expect(count(retriesLog, /"IdempotencyKey"/)).toBe(0);
});

test("the engine's refusals keep their status on the build: the same key for another cart is 422, not 500", async () => {
  // The engine is made by instrumentation's copy of the package, the middleware runs in the route's
  // copy: their error classes must know each other (packages/idempotency/src/brand.ts).
  const key = randomUUID();
  expect((await checkout(a, key)).status).toBe(200);
  const other = await fetch(`${a.baseURL}/api/trpc/checkout.placeOrder`, {
    method: "POST",
    headers: {
      authorization: "Bearer acme_demo_token",
      "content-type": "application/json",
      "idempotency-key": key,
    },
    body: JSON.stringify({ items: [{ productId, quantity: 2 }] }),
  });
  expect(other.status).toBe(422);
  expect(((await other.json()) as { error: { data: { reason: string } } }).error.data.reason).toBe(
    "idempotency_key_reused",
  );
});

test("counters reach the database within their flush interval, with nobody reading /api/metrics", async () => {
  // globex has executed nothing yet on any instance: whatever the table gains is these three.
  const before = await executedCount("globex");
  for (let i = 0; i < 3; i++)
    expect((await checkout(a, randomUUID(), "globex_demo_token")).status).toBe(200);
  // The default interval is 5 s: allow it twice over, for a busy machine.
  await waitFor(
    "three executions in the counter table",
    async () => (await executedCount("globex")) === before + 3,
    10_000,
  );
  expect(a.output()).not.toContain("/api/metrics");
});

test("a bust on one instance makes the next retry on the other run the handler again, for the same order", async () => {
  const key = randomUUID();
  const first = await checkout(a, key);
  const order = ((await first.json()) as { result: { data: { order: { id: string } } } }).result
    .data.order.id;
  // B reads the answer from the store once, then holds it in memory: its next retry reads nothing.
  expect((await checkout(b, key)).headers.get("idempotent-replayed")).toBe("true");
  const fromMemory = await statementsDuring(async () => {
    expect((await checkout(b, key)).headers.get("idempotent-replayed")).toBe("true");
  });
  expect(count(fromMemory, /"IdempotencyKey"/)).toBe(0);
  const { rows } = await sql.query<{ id: string }>(
    `SELECT "id"::text AS id FROM "IdempotencyKey" WHERE "key" = $1`,
    [key],
  );
  const bust = await fetch(`${a.baseURL}/api/trpc/admin.keys.bust`, {
    method: "POST",
    headers: {
      authorization: "Bearer admin_demo_token",
      "content-type": "application/json",
      "idempotency-key": randomUUID(),
    },
    body: JSON.stringify({
      id: rows[0]!.id,
      reason: "refund issued by hand: let the client retry",
    }),
  });
  expect(bust.status).toBe(200);
  // A's commit NOTIFYs B, which forgets the answer: the next retry there runs the handler (no
  // replay header) and answers with the same order, as a re-execution of one intent must.
  let again: Response | undefined;
  const deadline = Date.now() + 5_000;
  do again = await checkout(b, key);
  while (again.headers.get("idempotent-replayed") === "true" && Date.now() < deadline);
  expect(again.status).toBe(200);
  expect(again.headers.get("idempotent-replayed")).toBeNull();
  expect(
    ((await again.json()) as { result: { data: { order: { id: string } } } }).result.data.order.id,
  ).toBe(order);
});

test("counters survive a graceful stop: SIGTERM flushes what the interval has not", async () => {
  // An hour between flushes: only the stop can write these counts.
  const c = await startNextInstance(instanceEnv({ IDEMPOTENCY_COUNTER_FLUSH_MS: "3600000" }));
  const before = await executedCount("globex");
  try {
    for (let i = 0; i < 2; i++)
      expect((await checkout(c, randomUUID(), "globex_demo_token")).status).toBe(200);
    expect(await executedCount("globex")).toBe(before);
  } finally {
    c.process.kill("SIGTERM");
    // A server that does not leave on SIGTERM fails here, and is killed rather than left behind.
    await waitFor(
      "the server to exit on SIGTERM",
      () => c.process.exitCode !== null || c.process.signalCode !== null,
      15_000,
    ).finally(() => c.stop());
  }
  expect(await executedCount("globex")).toBe(before + 2);
});

test("PostgreSQL killed with SIGKILL under load: no uncaught exception, and both servers serve again once it is back", async () => {
  test.setTimeout(120_000);
  let loading = true;
  const statuses = new Map<number, number>();
  const load = [a, b].flatMap((instance) =>
    Array.from({ length: 4 }, async (_, n) => {
      while (loading) {
        // Half the requests pause inside their transaction (demo mode's x-demo-delay-ms), so the
        // kill finds connections checked out mid-transaction, not only idle ones.
        const status = await checkout(
          instance,
          randomUUID(),
          "acme_demo_token",
          n % 2 ? { "x-demo-delay-ms": "200" } : {},
        ).then(
          (res) => res.status,
          () => 0,
        );
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  await waitFor("20 checkouts under load", () => (statuses.get(200) ?? 0) >= 20);
  const postmaster = findPostmaster(dataDir)!;
  process.kill(postmaster.pid, "SIGKILL");
  await waitFor("the postmaster to die", () => !isProcessAlive(postmaster.pid));
  await waitFor("a 503 while the database is gone", () => (statuses.get(503) ?? 0) > 0);
  // Its backends notice the postmaster's death and leave; until they have, a new server refuses
  // the data folder. Start it again as soon as it can be (a refused start is "not yet").
  database = await waitFor(
    "PostgreSQL to start again on its folder",
    () => startDatabase(),
    30_000,
  );
  const served = (statuses.get(200) ?? 0) + 10;
  await waitFor(
    "checkouts answered again on the restarted database",
    () => (statuses.get(200) ?? 0) >= served,
    30_000,
  );
  loading = false;
  await Promise.all(load);
  for (const instance of [a, b]) {
    expect(instance.process.exitCode).toBeNull();
    expect((await fetch(`${instance.baseURL}/api/health`)).status).toBe(200);
    expect((await checkout(instance, randomUUID())).status).toBe(200);
    expect(instance.output()).not.toMatch(/uncaughtException|unhandledRejection/);
  }
  // Nothing but answers and refusals: no request failed with a 500.
  expect([...statuses.keys()].filter((s) => s !== 200 && s !== 503 && s !== 0)).toEqual([]);
});
