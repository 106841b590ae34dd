// Sign-in throttle (OWASP Authentication Cheat Sheet): it slows guessing without letting a third
// party lock the owner out. Three counters in PostgreSQL, one budget for every instance:
//   - per account AND source: 5 failures per 15 minutes, then that source waits (429);
//   - per source: 30 attempts per 15 minutes, whatever the accounts (spraying), then 429;
//   - per account: past 5 failures each attempt is slowed (250 ms doubling to 4 s), never refused.
// An attempt is taken before the password is checked, in one atomic upsert (no check-then-record
// gap). A correct password gives back the pair's budget, the account's failures and one unit of
// the source's (an attacker cannot refill an address with an account of their own).
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";

export interface ThrottleLimits {
  perAccountAndSource: number;
  /** All accounts together: room for an office, not a dictionary. */
  perSource: number;
  /** Failures of one account (all sources) in a window past which its attempts are slowed. */
  accountSlowAfter: number;
  windowSeconds: number;
}

export const DEFAULT_LIMITS: ThrottleLimits = {
  perAccountAndSource: 5,
  perSource: 30,
  accountSlowAfter: 5,
  windowSeconds: 15 * 60,
};

/** The slow-down's first step and ceiling: a guesser's round trip costs seconds, the owner 4 s. */
export const SLOWDOWN = { firstMs: 250, maxMs: 4_000 } as const;

/** Stale rows removed per failed attempt: the table stays as small as the live windows. */
const FORGET_BATCH = 10;

type ThrottleDecision =
  { allowed: true; delayMs: number } | { allowed: false; retryAfterSeconds: number };
type ThrottleKeys = ReturnType<typeof throttleKeys>;

export function throttleKeys(email: string, address: string) {
  const account = email.trim().toLowerCase();
  return {
    account: `account:${account}`,
    pair: `pair:${address}|${account}`,
    source: `source:${address}`,
  };
}

/** How long an attempt on an account with `failures` recent failures waits before its check. */
export function slowdownMs(failures: number, limits: ThrottleLimits = DEFAULT_LIMITS): number {
  if (failures < limits.accountSlowAfter) return 0;
  return Math.min(
    SLOWDOWN.firstMs * 2 ** Math.min(failures - limits.accountSlowAfter, 16),
    SLOWDOWN.maxMs,
  );
}

type Row = { key: string; attempts: number; retryAfter: number };

/** Adds one to each key's count in its window (an ended window restarts at 1); returns counts. */
function bump(keys: string[], window: number): Prisma.Sql {
  // Keys in a fixed order, so two concurrent attempts lock the rows in the same order. The SET
  // expressions read the row as it was.
  return Prisma.sql`
    INSERT INTO "SignInThrottle" ("key", "attempts", "windowStartedAt")
    SELECT k, 1, now() FROM unnest(${[...keys].sort()}::text[]) AS k
    ON CONFLICT ("key") DO UPDATE SET
      "attempts" = CASE WHEN "SignInThrottle"."windowStartedAt" <= now() - make_interval(secs => ${window})
                        THEN 1 ELSE "SignInThrottle"."attempts" + 1 END,
      "windowStartedAt" = CASE WHEN "SignInThrottle"."windowStartedAt" <= now() - make_interval(secs => ${window})
                        THEN now() ELSE "SignInThrottle"."windowStartedAt" END
    RETURNING "key", "attempts",
      ceil(extract(epoch FROM "windowStartedAt" + make_interval(secs => ${window}) - now()))::int AS "retryAfter"`;
}

/** Takes one attempt from the pair and source budgets: refused if one is spent, slowed if hit. */
export async function takeAttempt(
  db: Db,
  keys: ThrottleKeys,
  limits: ThrottleLimits = DEFAULT_LIMITS,
): Promise<ThrottleDecision> {
  const window = limits.windowSeconds;
  const rows = await db.$queryRaw<Row[]>(Prisma.sql`
    WITH taken AS (${bump([keys.pair, keys.source], window)})
    SELECT "key", "attempts", "retryAfter" FROM taken
    UNION ALL
    SELECT "key", "attempts", 0 FROM "SignInThrottle"
    WHERE "key" = ${keys.account} AND "windowStartedAt" > now() - make_interval(secs => ${window})`);
  const limitOf = { [keys.pair]: limits.perAccountAndSource, [keys.source]: limits.perSource };
  const over = rows.filter((r) => r.attempts > (limitOf[r.key] ?? Infinity));
  if (over.length > 0)
    return { allowed: false, retryAfterSeconds: Math.max(1, ...over.map((r) => r.retryAfter)) };
  const failures = rows.find((r) => r.key === keys.account)?.attempts ?? 0;
  return { allowed: true, delayMs: slowdownMs(failures, limits) };
}

/** A wrong password: one more failure against the account, from whatever source. */
export async function recordFailure(
  db: Db,
  keys: ThrottleKeys,
  limits: ThrottleLimits = DEFAULT_LIMITS,
): Promise<void> {
  await db.$queryRaw(bump([keys.account], limits.windowSeconds));
}

/** A correct password: the pair and the account start afresh, the source gets this attempt back. */
export async function giveBackAttempt(db: Db, keys: ThrottleKeys): Promise<void> {
  await db.$executeRaw`DELETE FROM "SignInThrottle" WHERE "key" IN (${keys.account}, ${keys.pair})`;
  await db.$executeRaw`UPDATE "SignInThrottle" SET "attempts" = greatest("attempts" - 1, 0) WHERE "key" = ${keys.source}`;
}

/** Deletes a few rows whose window ended long ago (called after a failed attempt). */
export async function forgetStaleAttempts(
  db: Db,
  limits: ThrottleLimits = DEFAULT_LIMITS,
): Promise<number> {
  return db.$executeRaw`
    DELETE FROM "SignInThrottle" WHERE "key" IN (
      SELECT "key" FROM "SignInThrottle"
      WHERE "windowStartedAt" < now() - make_interval(secs => ${limits.windowSeconds})
      ORDER BY "windowStartedAt" LIMIT ${FORGET_BATCH}
      FOR UPDATE SKIP LOCKED)`;
}
