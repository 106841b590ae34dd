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
import * as SQL from "../../../packages/idempotency/src/store/sql";
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

/** The hand-written reservation's lease and retention, the engine's defaults. */
const LEASE_MS = 30_000;
const TTL_SECONDS = 86_400;

type Op = () => Promise<unknown>;

async function main() {
  const start = await nextMessage<WorkerStart>();
  const app = await load(start);
  await app.setupDatabase(start.url, () => {}, { demo: true });
  const side = await openSide(app, start.url);
  const ops = operations(app, side, start.label);
  reply({ kind: "ready" });
  await serve(ops);
  await side.engine.close();
  await side.db.$disconnect();
  await side.pool.end();
  await side.handPool.end();
  process.disconnect?.();
}

type OpenSide = Awaited<ReturnType<typeof openSide>>;

/** The app's pool, Prisma and engine as the app builds them; a pool for the hand-written SQL. */
async function openSide(app: AppModules, url: string) {
  // Idle connections are kept (idleTimeoutMillis 0): a slice must not pay for the last one's pause.
  const pool = new app.Pool({ connectionString: url, max: POOL_MAX, idleTimeoutMillis: 0 });
  const handPool = new app.Pool({
    connectionString: url,
    max: POOL_MAX,
    idleTimeoutMillis: 0,
  });
  // The server stops at the end: its "terminating connection" notices are expected then.
  for (const p of [pool, handPool]) p.on("error", () => {});
  const db = app.createDb(url, { pool, preparedStatements: true });
  await db.$executeRawUnsafe(EFFECTS_TABLE_SQL);
  const engine = app.createEngineFor(db, {});
  return { pool, handPool, db, engine };
}

/** Every op the coordinator may ask for, each a new key (or a new row) with a fresh value. */
function operations(app: AppModules, side: OpenSide, label: string): Record<string, Op> {
  const { db, engine, pool, handPool } = side;
  let n = 0;
  const value = () => `${label}-${n++}`;
  return {
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
    handPrisma: () => handPrisma(pool, db, value()),
  };
}

/**
 * The protocol written by hand inside the same Prisma transaction as the engine's, with the
 * engine's own statements (this checkout's): the reservation on the pool, then the business write
 * and the fenced completion in one Prisma transaction, no engine code around them. What an engine
 * that completes through Prisma cannot go below.
 */
async function handPrisma(pool: pg.Pool, db: AppDb, v: string) {
  const token = randomUUID();
  const key = randomUUID();
  const reserve = ["bench", key, "effect", "0".repeat(64), token, LEASE_MS];
  const { rows } = await pool.query<{ id: string; inserted: boolean }>({
    ...SQL.RESERVE,
    values: [...reserve, TTL_SECONDS],
  });
  if (!rows[0]?.inserted) throw new Error("not reserved");
  await db.$transaction(async (tx) => {
    const [row] = await tx.$queryRawUnsafe<{ id: number }[]>(INSERT, v);
    const body = JSON.stringify({ effectId: row!.id, value: v });
    const completion = [rows[0]!.id, token, "COMPLETED", 200, body, "application/json"];
    const done = await tx.$queryRawUnsafe<unknown[]>(
      SQL.FINISH.plain.text,
      ...[...completion, null, null, null, "bench", key],
    );
    if (done.length !== 1) throw new Error("lease lost");
  });
}

/** Answers the coordinator's requests, one at a time, until it says stop. */
async function serve(ops: Record<string, Op>) {
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
