// One instance runs each job at a time: a transaction-level PostgreSQL advisory lock, taken with
// pg_try_advisory_xact_lock so a second instance skips the round instead of queueing behind it,
// and released by the database itself if the holder dies.
import type pg from "pg";
import type { PrismaClient } from "../../../generated/prisma/client";
import type { Tx } from "../store";

/** Lock ids per job: arbitrary constants, distinct from Prisma Migrate's 72707369. */
export const JobLock = {
  REAPER: 7_020_001,
  SWEEPER: 7_020_002,
} as const;

/** Runs `fn` in a transaction holding the lock, or returns null at once if another holder has it. */
export async function withJobLock<T>(db: PrismaClient, lockId: number, fn: (tx: Tx) => Promise<T>, timeoutMs = 60_000): Promise<T | null> {
  return db.$transaction(
    async (tx) => {
      const [row] = await tx.$queryRaw<{ locked: boolean }[]>`SELECT pg_try_advisory_xact_lock(${lockId}::bigint) AS "locked"`;
      if (!row?.locked) return null;
      return fn(tx);
    },
    { timeout: timeoutMs, maxWait: timeoutMs },
  );
}

/**
 * The same guard held by a session instead of a transaction: a dedicated connection takes
 * pg_try_advisory_lock, runs `fn` (whose statements commit one by one), and unlocks. If the
 * process dies, its connection closes and PostgreSQL releases the lock.
 */
export async function withSessionJobLock<T>(pool: pg.Pool, lockId: number, fn: (client: pg.PoolClient) => Promise<T>): Promise<T | null> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1::bigint) AS locked", [lockId]);
    if (!rows[0]?.locked) return null;
    try {
      return await fn(client);
    } finally {
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [lockId]);
    }
  } finally {
    client.release();
  }
}
