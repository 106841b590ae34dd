// Watching a pool's connections from outside: the backends PostgreSQL serves on the test's
// database, seen by an observer connection of its own. A pid that appears means the pool opened a
// connection (a reconnect); one that vanishes means it threw one away.
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import type { TestDatabase } from "./database";

export function useBackendObserver(t: TestDatabase, poolSize: number) {
  let observer: pg.Client;
  beforeAll(async () => {
    observer = new pg.Client({ connectionString: t.url });
    await observer.connect();
  });
  afterAll(async () => {
    await observer?.end();
  });

  /** The backends serving the pool (everyone on this database but the observer itself). */
  async function poolBackends(): Promise<number[]> {
    const { rows } = await observer.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY pid",
    );
    return rows.map((r) => r.pid);
  }

  /**
   * Opens every connection the pool may hold, so a later new pid can only mean a reconnect:
   * poolSize transactions each hold a connection until all have one (a barrier, not a sleep).
   */
  async function fillPool(): Promise<void> {
    let arrived = 0;
    let release!: () => void;
    const allIn = new Promise<void>((resolve) => (release = resolve));
    await Promise.all(
      Array.from({ length: poolSize }, () =>
        t.db.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT 1 AS "one"`;
          if (++arrived === poolSize) release();
          await allIn;
        }),
      ),
    );
    expect((await poolBackends()).length).toBe(poolSize);
  }

  return { poolBackends, fillPool };
}
