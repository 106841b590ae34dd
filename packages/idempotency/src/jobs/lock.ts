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
 * Wraps a data-modifying statement (`DELETE … RETURNING …`, whose WHERE may use "locked") so it
 * runs only under the job's lock. The result has one row: `locked` and the statement's rows as
 * `rows` (a JSON array). $1 is the lock id.
 */
export function underJobLock(statement: string): string {
  return `
    WITH "lock" AS (SELECT pg_try_advisory_xact_lock($1::bigint) AS "locked"),
    "done" AS (${statement})
    SELECT (SELECT "locked" FROM "lock") AS "locked", coalesce(json_agg("done"), '[]'::json) AS "rows" FROM "done"`;
}

export interface LockedResult<T> {
  locked: boolean;
  rows: T[];
}
