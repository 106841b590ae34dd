// Sign-in throttle: a budget of attempts per account and per client address in a fixed window,
// kept in PostgreSQL so every app instance spends from the same budget (one instance per guess
// would otherwise multiply it).
//
// An attempt is *taken* before the password is checked, in one atomic upsert: concurrent guesses
// cannot all slip through a check-then-record gap. A correct password gives its attempt back (the
// account's whole budget: its owner proved who they are; one unit of the address's budget only,
// so an attacker cannot refill an address by signing in to an account of their own in between).
import { Prisma } from "../../generated/prisma/client";
import type { Db } from "../db/client";

export interface ThrottleLimits {
  /** Attempts per account (e-mail) per window: 5 guesses per 15 minutes, ~480 a day. */
  perAccount: number;
  /** Attempts per client address per window: room for a shared office, not for a dictionary. */
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LIMITS: ThrottleLimits = { perAccount: 5, perAddress: 30, windowSeconds: 15 * 60 };

/** Stale rows removed per failed attempt: the table stays as small as the live windows. */
const FORGET_BATCH = 10;

export type ThrottleDecision = { allowed: true; keys: ThrottleKeys } | { allowed: false; retryAfterSeconds: number };

export interface ThrottleKeys {
  account: string;
  address: string;
}

export function throttleKeys(email: string, address: string): ThrottleKeys {
  return { account: `account:${email.trim().toLowerCase()}`, address: `address:${address}` };
}

interface Row {
  key: string;
  attempts: number;
  retryAfter: number;
}

/** Takes one attempt from both budgets; refused (with how long to wait) when either is spent. */
export async function takeAttempt(db: Db, keys: ThrottleKeys, limits: ThrottleLimits = DEFAULT_LIMITS): Promise<ThrottleDecision> {
  const window = limits.windowSeconds;
  // Keys in a fixed order, so two concurrent attempts lock the two rows in the same order. The
  // SET expressions read the row as it was, so a window that ended restarts at 1.
  const rows = await db.$queryRaw<Row[]>(Prisma.sql`
    INSERT INTO "SignInThrottle" ("key", "attempts", "windowStartedAt")
    SELECT k, 1, now() FROM unnest(${[keys.account, keys.address].sort()}::text[]) AS k
    ON CONFLICT ("key") DO UPDATE SET
      "attempts" = CASE WHEN "SignInThrottle"."windowStartedAt" <= now() - make_interval(secs => ${window})
                        THEN 1 ELSE "SignInThrottle"."attempts" + 1 END,
      "windowStartedAt" = CASE WHEN "SignInThrottle"."windowStartedAt" <= now() - make_interval(secs => ${window})
                        THEN now() ELSE "SignInThrottle"."windowStartedAt" END
    RETURNING "key", "attempts",
      ceil(extract(epoch FROM "windowStartedAt" + make_interval(secs => ${window}) - now()))::int AS "retryAfter"`);
  const over = rows.filter((r) => r.attempts > (r.key === keys.account ? limits.perAccount : limits.perAddress));
  if (over.length === 0) return { allowed: true, keys };
  return { allowed: false, retryAfterSeconds: Math.max(1, ...over.map((r) => r.retryAfter)) };
}

/** A correct password: the account starts afresh, the address gets this attempt back. */
export async function giveBackAttempt(db: Db, keys: ThrottleKeys): Promise<void> {
  await db.$executeRaw`DELETE FROM "SignInThrottle" WHERE "key" = ${keys.account}`;
  await db.$executeRaw`UPDATE "SignInThrottle" SET "attempts" = greatest("attempts" - 1, 0) WHERE "key" = ${keys.address}`;
}

/** Deletes a few rows whose window ended long ago (called after a failed attempt). */
export async function forgetStaleAttempts(db: Db, limits: ThrottleLimits = DEFAULT_LIMITS): Promise<number> {
  return db.$executeRaw`
    DELETE FROM "SignInThrottle" WHERE "key" IN (
      SELECT "key" FROM "SignInThrottle"
      WHERE "windowStartedAt" < now() - make_interval(secs => ${limits.windowSeconds})
      ORDER BY "windowStartedAt" LIMIT ${FORGET_BATCH}
      FOR UPDATE SKIP LOCKED)`;
}
