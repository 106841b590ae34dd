// A fresh, migrated and seeded database per test file, cloned from the run's template.
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { createDb, type Db } from "../server/db/client";
import { withDatabase as withClient } from "../../packages/idempotency/src/conformance/target";

export interface TestDatabase {
  url: string;
  db: Db;
  name: string;
}

/**
 * How long a test's query waits for a pool connection. The app's 2 s (STORE_WAIT_MS) is a
 * production answer to overload: past it a request is refused as busy. A test is not about
 * overload unless it says so (and then passes its own wait): on a loaded 2-core machine, where
 * five suites run at once, a burst of new connections can take seconds to log in, and a 2 s wait
 * then fails a test that has nothing wrong with it. 20 s still fails, with pg's own error, well
 * inside the 30 s test timeout when PostgreSQL is really gone.
 */
export const TEST_CONNECT_WAIT_MS = 20_000;

/** A client for a test's own second instance: the app's client with a test's connection wait. */
export function createTestDb(url: string, options: Parameters<typeof createDb>[1] = {}): Db {
  return createDb(url, { connectTimeoutMs: TEST_CONNECT_WAIT_MS, ...options });
}

export function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withClient(inject("pgAdminUrl"), fn);
}

/** The URL of the run's database `name` (on the run's server). */
export const databaseUrl = (name: string) =>
  inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);

/**
 * A new empty database (not the migrated template), made by the caller's `admin` client (which
 * drops it when done): its name and URL.
 */
export async function createEmptyDatabase(
  admin: pg.Client,
  prefix: string,
): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  return { name, url: databaseUrl(name) };
}

export async function createTestDatabase(
  options: { poolMax?: number; connectTimeoutMs?: number } = {},
): Promise<TestDatabase & { drop: () => Promise<void> }> {
  const name = `once_test_${randomBytes(6).toString("hex")}`;
  await admin(async (c) => {
    // A background process (autovacuum) may hold the template for a moment; the clone must wait for
    // it to let go. Bounded: 50 tries, 100 ms apart.
    for (let attempt = 1; ; attempt++) {
      try {
        await c.query(`CREATE DATABASE "${name}" TEMPLATE "${inject("pgTemplate")}"`);
        return;
      } catch (error) {
        const busy = (error as { code?: string }).code === "55006"; // object_in_use
        if (!busy || attempt >= 50) throw error;
        await sleep(100);
      }
    }
  });
  const url = databaseUrl(name);
  const db = createDb(url, {
    max: options.poolMax ?? 10,
    connectTimeoutMs: options.connectTimeoutMs ?? TEST_CONNECT_WAIT_MS,
  });
  return {
    url,
    db,
    name,
    drop: async () => {
      await db.$disconnect();
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** In a test file: `const t = useTestDatabase();` then `t.db` inside tests. */
export function useTestDatabase(
  options: { poolMax?: number; connectTimeoutMs?: number } = {},
): TestDatabase {
  const handle = {} as TestDatabase & { drop?: () => Promise<void> };
  beforeAll(async () => {
    Object.assign(handle, await createTestDatabase(options));
  });
  afterAll(async () => {
    await handle.drop?.();
  });
  return handle;
}
