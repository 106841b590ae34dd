// The Prisma client. Handlers never import this: they get `ctx.db` (or the idempotency
// transaction), so their writes commit together with the key's completion.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { env, preparedStatementsWanted } from "../env";
import { statementNames } from "./statement-names";
import { PrismaClient, type Prisma } from "../../generated/prisma/client";

export type Db = PrismaClient;
/** A Prisma interactive transaction: what handlers write through (`ctx.tx`). */
export type Tx = Prisma.TransactionClient;

/** Pool size per process: two cores here; a few connections per core keep PostgreSQL busy. */
const POOL_MAX = 10;

// Per process, not per module copy: Next bundles the instrumentation (which makes the client and
// starts the jobs) apart from each route, and a route's copy of this module would otherwise not
// know the client's pool, direct URL or preparation: its engine then had no LISTEN connection, so
// no replay cache and no Prefer: wait. (The composition root of issue 19 replaces this.)
interface DbFacts {
  pools: WeakMap<Db, pg.Pool>;
  directUrls: WeakMap<Db, string>;
  prepared: WeakSet<Db>;
}
const factsSlot = globalThis as unknown as Record<symbol, DbFacts | undefined>;
const facts = (factsSlot[Symbol.for("once.dbFacts")] ??= { pools: new WeakMap(), directUrls: new WeakMap(), prepared: new WeakSet() });
const { pools, directUrls, prepared } = facts;

export function createDb(
  connectionString: string,
  options: {
    max?: number;
    /** bring your own (benchmarks) */ pool?: pg.Pool;
    /** A direct connection string for LISTEN (the engine's replay cache); the app's process client has one. */
    directUrl?: string;
    /**
     * Prepare statements (Prisma's and the engine's): PostgreSQL parses and plans each once per
     * connection. The default follows the configuration (env.ts: on unless DATABASE_URL goes
     * through a pooler); pass false for a connection string that goes through PgBouncer.
     */
    preparedStatements?: boolean;
  } = {},
): Db {
  const prepare = options.preparedStatements ?? preparedStatementsWanted();
  const pool =
    options.pool ??
    new pg.Pool({
      connectionString,
      max: options.max ?? POOL_MAX,
      // Fail fast when PostgreSQL is unreachable: the engine answers 503 instead of hanging.
      connectionTimeoutMillis: 2_000,
    });
  // An idle connection that dies (PostgreSQL restarted) is dropped by the pool; the next query
  // opens a new one. Without a listener the error would crash the process.
  pool.on("error", () => {});
  const db = new PrismaClient({ adapter: new PrismaPg(pool, prepare ? { statementNameGenerator: statementNames() } : {}) });
  pools.set(db, pool);
  if (prepare) prepared.add(db);
  if (options.directUrl) directUrls.set(db, options.directUrl);
  if (!options.pool) {
    // The adapter does not end a pool it was given; a client that owns its pool closes it with
    // $disconnect, as it would have closed a pool the adapter made itself.
    const disconnect = db.$disconnect.bind(db);
    db.$disconnect = async () => {
      await disconnect();
      if (!pool.ended) await pool.end();
    };
  }
  return db;
}

/**
 * The pg pool under a client made by createDb. The idempotency engine sends its statements that
 * run outside a business transaction straight to it: same connections, without Prisma's
 * per-statement cost (see packages/idempotency/src/store/postgres.ts).
 */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

/** Whether this client prepares its statements (the engine's store then prepares its own too). */
export function preparesStatements(db: Db): boolean {
  return prepared.has(db);
}

/** Where the engine may LISTEN for evictions, if this client was given a direct connection string. */
export function directUrlOf(db: Db): string | undefined {
  return directUrls.get(db);
}

const globalForDb = globalThis as unknown as { onceDb?: Db };

/** The app's one client per process (kept on globalThis so Next's dev reloads do not leak pools). */
export function getDb(): Db {
  if (!globalForDb.onceDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`");
    // Behind a transaction-mode pooler (PgBouncer), DIRECT_DATABASE_URL names PostgreSQL itself.
    globalForDb.onceDb = createDb(url, { directUrl: env().DIRECT_DATABASE_URL ?? url });
  }
  return globalForDb.onceDb;
}
