// A fresh database per test file, cloned from the run's template, with a Prisma client (generated
// from test/support/schema.prisma) on a pg pool, as an adopting app would build it.
import { randomBytes } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { PrismaClient } from "./generated/client";

export type Db = PrismaClient;

export interface TestDatabase {
  url: string;
  db: Db;
  pool: pg.Pool;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject("pkgAdminUrl") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const pools = new WeakMap<Db, pg.Pool>();
/** The pg pool under a test client: the engine sends its statements outside transactions to it. */
export function poolOf(db: Db): pg.Pool | undefined {
  return pools.get(db);
}

export function connect(
  url: string,
  max = 10,
  connectionTimeoutMillis = 2_000,
): { db: Db; pool: pg.Pool } {
  // Fail fast when PostgreSQL is gone: the engine answers 503 instead of hanging.
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis });
  pool.on("error", () => {}); // an idle connection that dies is dropped; the next query reconnects
  const db = new PrismaClient({ adapter: new PrismaPg(pool) });
  pools.set(db, pool);
  return { db, pool };
}

export async function createTestDatabase(
  poolMax = 10,
): Promise<TestDatabase & { drop: () => Promise<void> }> {
  const name = `idem_${randomBytes(6).toString("hex")}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}" TEMPLATE "${inject("pkgTemplate")}"`));
  const url = inject("pkgAdminUrl").replace(/\/postgres$/, `/${name}`);
  const { db, pool } = connect(url, poolMax);
  return {
    url,
    db,
    pool,
    drop: async () => {
      await db.$disconnect();
      await pool.end();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** In a test file: `const t = useTestDatabase();` then `t.db` inside tests. */
export function useTestDatabase(options: { poolMax?: number } = {}): TestDatabase {
  const handle = {} as TestDatabase & { drop?: () => Promise<void> };
  beforeAll(async () => {
    Object.assign(handle, await createTestDatabase(options.poolMax));
  });
  afterAll(async () => {
    await handle.drop?.();
  });
  return handle;
}
