// A fresh, migrated and seeded database per test file, cloned from the run's template.
import { setTimeout as sleep } from "node:timers/promises";
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { createDb, type Db } from "../server/db/client";

export interface TestDatabase {
  url: string;
  db: Db;
  name: string;
}

export async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
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
  const url = inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);
  const db = createDb(url, {
    max: options.poolMax ?? 10,
    connectTimeoutMs: options.connectTimeoutMs,
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
