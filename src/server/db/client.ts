// The Prisma client. Handlers never import this: they get `ctx.db` (or the idempotency
// transaction), so their writes commit together with the key's completion.
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../../generated/prisma/client";

export type Db = PrismaClient;

/** Pool size per process: two cores here; a few connections per core keep PostgreSQL busy. */
const POOL_MAX = 10;

export function createDb(connectionString: string, options: { max?: number } = {}): Db {
  const adapter = new PrismaPg({
    connectionString,
    max: options.max ?? POOL_MAX,
    // Fail fast when PostgreSQL is unreachable: the engine answers 503 instead of hanging.
    connectionTimeoutMillis: 2_000,
  });
  return new PrismaClient({ adapter });
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
