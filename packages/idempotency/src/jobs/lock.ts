// One instance runs each job at a time. Each batch is one statement that first takes a
// transaction-level advisory lock (pg_try_advisory_xact_lock): a second instance skips instead of
// queueing, the database releases the lock at the statement's commit or if the holder dies, and
// no session state is needed, so the jobs are correct through a transaction-mode pooler.

/** Lock ids per job: arbitrary constants, distinct from Prisma Migrate's 72707369. */
export const JobLock = {
  REAPER: 7_020_001,
  SWEEPER: 7_020_002,
} as const;

/**
 * One batch of a job, only under the job's lock: `pick` selects the batch's key ids (it ends in
 * `LIMIT … FOR UPDATE SKIP LOCKED`), materialised so it runs exactly once (a semi-join could run
 * it again per row and take more than its limit); the keys are then deleted, re-checked by
 * `stillTrue`. The result has one row: `locked`, and the deleted keys' `returning` columns as
 * `rows` (a JSON array). $1 is the lock id.
 */
export function lockedBatchDelete(pick: string, stillTrue: string, returning: string): string {
  return `
    WITH "lock" AS (SELECT pg_try_advisory_xact_lock($1::bigint) AS "locked"),
    "batch" AS MATERIALIZED (${pick}),
    "done" AS (
      DELETE FROM "IdempotencyKey" AS k USING "batch" AS b
      WHERE (SELECT "locked" FROM "lock") AND k."id" = b."id" AND ${stillTrue}
      RETURNING ${returning}
    )
    SELECT (SELECT "locked" FROM "lock") AS "locked", coalesce(json_agg("done"), '[]'::json) AS "rows" FROM "done"`;
}

export interface LockedResult<T> {
  locked: boolean;
  rows: T[];
}
