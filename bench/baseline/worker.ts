// One build's side of `npm run bench -- --baseline DIR`: a child process started by compare.ts
// with its working directory in that build's checkout, so every module it loads (the app's Prisma
// client, its engine, pg, Prisma's adapter) is that checkout's own. This file itself imports only
// Node's modules and the floor's hand-written SQL (plain SQL on a pool it is given), so it is the
// same code for both builds: the bench coordinates, the two workers take turns.
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type pg from "pg";
import { floorIdempotent, floorTransactionOnly } from "../floor";
import type { CountingPool } from "../harness";
import type { WorkerReply, WorkerRequest, WorkerStart } from "./protocol";

/** Per side, as `npm run bench` sizes its pools: two cores, a few connections each. */
const POOL_MAX = 10;
const EFFECTS_TABLE_SQL = `CREATE TABLE IF NOT EXISTS "TestEffect" (
  "id" SERIAL PRIMARY KEY, "scope" TEXT NOT NULL, "value" TEXT NOT NULL, "createdAt" TIMESTAMPTZ NOT NULL DEFAULT now())`;

/** The surface of the checkout's modules the worker uses: the same at every version compared. */
interface AppModules {
  createDb(url: string, options: { pool: pg.Pool; preparedStatements: boolean }): AppDb;
  createEngineFor(db: AppDb, config: object): { close(): Promise<void> };
  withIdempotency(
    engine: unknown,
    call: { scope: string; key: string; operation: string; request: unknown },
    handler: (tx: AppTx) => Promise<unknown>,
  ): Promise<unknown>;
  setupDatabase(url: string, log: (m: string) => void, options: { demo: boolean }): Promise<void>;
  Pool: typeof pg.Pool;
}
interface AppTx {
  $queryRawUnsafe<T>(sql: string, ...values: unknown[]): Promise<T>;
  $executeRawUnsafe(sql: string, ...values: unknown[]): Promise<number>;
}
interface AppDb extends AppTx {
  $transaction<T>(fn: (tx: AppTx) => Promise<T>): Promise<T>;
  $disconnect(): Promise<void>;
}

async function load(start: WorkerStart): Promise<AppModules> {
  const from = (file: string) => import(pathToFileURL(join(start.dir, file)).href);
  const [client, engine, setup, entry] = await Promise.all([
    from("src/server/db/client.ts"),
    from("src/server/engine.ts"),
    from("tools/db/setup.ts"),
    import(pathToFileURL(start.engineEntry).href),
  ]);
  const requireThere = createRequire(join(start.dir, "package.json"));
  return {
    createDb: client.createDb,
    createEngineFor: engine.createEngineFor,
    withIdempotency: entry.withIdempotency,
    setupDatabase: setup.setupDatabase,
    Pool: (requireThere("pg") as typeof pg).Pool,
  };
}

const INSERT = `INSERT INTO "TestEffect" ("scope", "value") VALUES ('bench', $1) RETURNING "id"`;

/**
 * The protocol written by hand inside the same Prisma transaction as the engine's: the floor's
 * reservation (one statement on the pool, committed asynchronously, as the engine's), then the
 * business write and the fenced completion in one Prisma transaction. What an engine that
 * completes through Prisma cannot go below.
 */
const HAND_RESERVE = `WITH "cfg" AS (SELECT set_config('synchronous_commit', 'off', true))
  INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
  SELECT $1, $2, 'effect', $3, 'PROCESSING', $4::uuid, now() + interval '30 seconds', now() + interval '1 day' FROM "cfg"
  ON CONFLICT ("scope", "key") DO NOTHING RETURNING "id"`;
const HAND_COMPLETE = `UPDATE "IdempotencyKey" SET "status" = 'COMPLETED', "responseStatus" = 200, "responseBody" = $3,
  "completedAt" = now(), "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
  WHERE "scope" = 'bench' AND "id" = $1::uuid AND "leaseToken" = $2::uuid`;

async function main() {
  const start = await nextMessage<WorkerStart>();
  const app = await load(start);
  await app.setupDatabase(start.url, () => {}, { demo: true });
  // Idle connections are kept (idleTimeoutMillis 0): a slice must not pay for the last one's pause.
  const pool = new app.Pool({ connectionString: start.url, max: POOL_MAX, idleTimeoutMillis: 0 });
  const handPool = new app.Pool({
    connectionString: start.url,
    max: POOL_MAX,
    idleTimeoutMillis: 0,
  });
  // The server stops at the end: its "terminating connection" notices are expected then.
  for (const p of [pool, handPool]) p.on("error", () => {});
  const db = app.createDb(start.url, { pool, preparedStatements: true });
  await db.$executeRawUnsafe(EFFECTS_TABLE_SQL);
  const engine = app.createEngineFor(db, {});

  let n = 0;
  const value = () => `${start.label}-${n++}`;
  const ops: Record<string, () => Promise<unknown>> = {
    prisma: () => db.$transaction((tx) => tx.$queryRawUnsafe(INSERT, value())),
    engine: () => {
      const v = value();
      return app.withIdempotency(
        engine,
        { scope: "bench", key: randomUUID(), operation: "effect", request: { value: v } },
        async (tx) => {
          const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(INSERT, v);
          return { effectId: row!.id, value: v };
        },
      );
    },
    handTransaction: () => floorTransactionOnly(handPool as CountingPool, "bench", value()),
    handFloor: () =>
      floorIdempotent(handPool as CountingPool, "bench", randomUUID(), { value: value() }, "async"),
    handPrisma: async () => {
      const v = value();
      const token = randomUUID();
      const { rows } = await handPool.query<{ id: string }>({
        name: "hand_reserve",
        text: HAND_RESERVE,
        values: ["bench", randomUUID(), "0".repeat(64), token],
      });
      await db.$transaction(async (tx) => {
        const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(INSERT, v);
        const body = JSON.stringify({ effectId: row!.id, value: v });
        if ((await tx.$executeRawUnsafe(HAND_COMPLETE, rows[0]!.id, token, body)) !== 1)
          throw new Error("lease lost");
      });
    },
  };
  reply({ kind: "ready" });

  for (;;) {
    const request = await nextMessage<WorkerRequest>();
    if (request.kind === "stop") break;
    const op = ops[request.op];
    if (!op) throw new Error(`unknown op ${request.op}`);
    if (request.kind === "warm") {
      // Every connection of the pool opened and every statement prepared on each of them.
      await Promise.all(Array.from({ length: POOL_MAX * 3 }, () => op()));
      for (let i = 0; i < request.calls; i++) await op();
      reply({ kind: "done", latenciesMs: [] });
      continue;
    }
    const latenciesMs: number[] = [];
    for (let i = 0; i < request.calls; i++) {
      const t0 = performance.now();
      await op();
      latenciesMs.push(performance.now() - t0);
    }
    reply({ kind: "done", latenciesMs });
  }
  await engine.close();
  await db.$disconnect();
  await pool.end();
  await handPool.end();
  process.disconnect?.();
}

const inbox: unknown[] = [];
let waiting: ((m: unknown) => void) | null = null;
process.on("message", (m) => {
  if (waiting) {
    const w = waiting;
    waiting = null;
    w(m);
  } else inbox.push(m);
});

function nextMessage<T>(): Promise<T> {
  if (inbox.length) return Promise.resolve(inbox.shift() as T);
  return new Promise((resolve) => (waiting = resolve as (m: unknown) => void));
}

function reply(message: WorkerReply) {
  process.send!(message);
}

main().catch((error: unknown) => {
  reply({
    kind: "failed",
    error: error instanceof Error ? (error.stack ?? error.message) : String(error),
  });
  process.exitCode = 1;
  process.disconnect?.();
});
