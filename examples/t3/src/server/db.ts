import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";

import { env } from "~/env";
import { PrismaClient } from "../../generated/prisma";

// Prisma without its Rust query engine (schema.prisma: engineType = "client"): it talks to
// PostgreSQL through this pg pool, which the idempotency engine shares (src/server/idempotency.ts).
const createPool = () => {
  // Fail fast when PostgreSQL is gone: the engine then answers 503 instead of hanging.
  const pool = new pg.Pool({
    connectionString: env.DATABASE_URL,
    connectionTimeoutMillis: 2_000,
  });
  // Without a listener a connection PostgreSQL drops while idle would crash the process.
  pool.on("error", (error) => console.warn(`[db] ${error.message}`));
  return pool;
};

const createPrismaClient = (pool: pg.Pool) =>
  new PrismaClient({
    adapter: new PrismaPg(pool),
    log:
      env.NODE_ENV === "development" ? ["query", "error", "warn"] : ["error"],
  });

const globalForPrisma = globalThis as unknown as {
  pool: pg.Pool | undefined;
  prisma: ReturnType<typeof createPrismaClient> | undefined;
};

// Kept on globalThis in production too (create-t3-app keeps it only in development): the
// idempotency engine built on this client must be one per process, and a bundler may evaluate this
// module once per route.
export const pool = (globalForPrisma.pool ??= createPool());
export const db = (globalForPrisma.prisma ??= createPrismaClient(pool));
