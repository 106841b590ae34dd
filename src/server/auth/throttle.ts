// Sign-in throttle (OWASP Authentication Cheat Sheet, "Protect against automated attacks"): it
// slows guessing without letting a third party lock the owner out. Three counters, in PostgreSQL
// so every app instance spends from the same budget:
//
//   - per account AND source: 5 failed guesses of one account from one client address per 15
//     minutes, then that source waits out the window (429). Only that pair: the owner, from
//     anywhere else, is not refused.
//   - per source: 30 attempts per 15 minutes from one address, whatever the accounts (password
//     spraying), then 429.
//   - per account: failures from every source. Past 5, each further attempt on the account is
//     slowed (250 ms, doubling, at most 4 s) before its password is checked, never refused: the
//     right password from a fresh source gets in, after at most that delay. A hard lock per
//     account is exactly what let anyone lock any account (and the operator's) out for good.
//
// An attempt is *taken* from the pair and source budgets before the password is checked, in one
// atomic upsert: concurrent guesses cannot all slip through a check-then-record gap. A correct
// password gives back the pair's budget and the account's failures (its owner proved who they
// are), and one unit of the source's (so an attacker cannot refill an address by signing in to an
// account of their own in between).
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";

export interface ThrottleLimits {
  /** Failed guesses of one account from one source per window: 5 per 15 minutes. */
  perAccountAndSource: number;
  /**
   * Attempts from one source per window, all accounts together: room for an office, not a
   * dictionary.
   */
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

/**
 * The slow-down's first step and ceiling: a guesser's round trip costs seconds, the owner waits at
 * most 4 s.
 */
export const SLOWDOWN = { firstMs: 250, maxMs: 4_000 } as const;

/** Stale rows removed per failed attempt: the table stays as small as the live windows. */
const FORGET_BATCH = 10;

export type ThrottleDecision =
  | { allowed: true; keys: ThrottleKeys; delayMs: number }
  | { allowed: false; retryAfterSeconds: number };

export interface ThrottleKeys {
  account: string;
  pair: string;
  source: string;
}

export function throttleKeys(email: string, address: string): ThrottleKeys {
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

interface Row {
  key: string;
  attempts: number;
  retryAfter: number;
}

/**
 * Adds one to each key's count in its window (a window that ended restarts at 1), returning the
 * counts.
 */
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

/**
 * Takes one attempt from the pair's and the source's budgets; refused when either is spent, slowed
 * when the account is under attack.
 */
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
  const limitOf = (key: string) =>
    key === keys.pair
      ? limits.perAccountAndSource
      : key === keys.source
        ? limits.perSource
        : Infinity;
  const over = rows.filter((r) => r.attempts > limitOf(r.key));
  if (over.length > 0)
    return { allowed: false, retryAfterSeconds: Math.max(1, ...over.map((r) => r.retryAfter)) };
  const failures = rows.find((r) => r.key === keys.account)?.attempts ?? 0;
  return { allowed: true, keys, delayMs: slowdownMs(failures, limits) };
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
