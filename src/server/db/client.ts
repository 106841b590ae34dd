// The Prisma client. Handlers never import this: they get `ctx.db` (or the idempotency
// transaction), so their writes commit together with the key's completion.
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../../generated/prisma/client";

export type Db = PrismaClient;

/** Pool size per process: two cores here; a few connections per core keep PostgreSQL busy. */
const POOL_MAX = 10;

const pools = new WeakMap<Db, pg.Pool>();

export function createDb(connectionString: string, options: { max?: number; /** bring your own (benchmarks) */ pool?: pg.Pool } = {}): Db {
  const pool = options.pool ?? new pg.Pool({
    connectionString,
    max: options.max ?? POOL_MAX,
    // Fail fast when PostgreSQL is unreachable: the engine answers 503 instead of hanging.
    connectionTimeoutMillis: 2_000,
  });
  // An idle connection that dies (PostgreSQL restarted) is dropped by the pool; the next query
  // opens a new one. Without a listener the error would crash the process.
  pool.on("error", () => {});
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  pools.set(db, pool);
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
 * per-statement cost (see src/server/idempotency/store.ts).
 */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

const globalForDb = globalThis as unknown as { onceDb?: Db };

/** The app's one client per process (kept on globalThis so Next's dev reloads do not leak pools). */
export function getDb(): Db {
  if (!globalForDb.onceDb) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error("DATABASE_URL is not set: start the app with `npm run dev` or `npm start`");
    globalForDb.onceDb = createDb(url);
  }
  return globalForDb.onceDb;
}
