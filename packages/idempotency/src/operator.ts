// The operator's repairs: bust a finished key, release a stuck one. Every judgement about a lease
// uses the database's `now()`, and the delete re-checks the key's state in the same statement, so
// a key that went live meanwhile (a retry took it over) is never removed.
//
// Run them on the transaction of the operator's own request, so the removal, its audit entry and
// the eviction notice commit together. Inside that transaction a DELETE waits for a concurrent
// writer's row lock and then re-evaluates its WHERE against the committed row (PostgreSQL's READ
// COMMITTED re-check): the condition is the guard.
import { announceEviction } from "./evictions.js";
import { runnerOf } from "./store/postgres.js";
import { COLUMNS } from "./store/sql.js";
import type { KeyRecord, SqlTransaction } from "./store/types.js";

/**
 * live: a request holds the key; expired: PROCESSING, its holder is gone (stuck); none: finished.
 */
export const LeaseState = { LIVE: "live", EXPIRED: "expired", NONE: "none" } as const;
export type LeaseState = (typeof LeaseState)[keyof typeof LeaseState];

/**
 * bust: a finished key (COMPLETED/FAILED) or a stuck one, so the next request with it runs anew.
 * release: only a stuck key (PROCESSING, lease expired): frees it without touching finished ones.
 * Neither ever removes a PROCESSING key whose lease is live: its request may still commit.
 */
export const KeyRemoval = { BUST: "bust", RELEASE: "release" } as const;
export type KeyRemoval = (typeof KeyRemoval)[keyof typeof KeyRemoval];

/**
 * The key an operator acts on: its id, and its scope where the caller knows it (a dashboard does:
 * it shows the scope on every row). With the scope the statements name it, so a key table
 * partitioned by scope reads one partition, and one distributed by scope (Citus) one shard; by id
 * alone they look everywhere.
 */
export type KeyTarget = string | { id: string; scope: string };

export type OperatorKeyRecord = KeyRecord & { leaseState: LeaseState; updatedAt: Date };

export type RemoveKeyResult =
  | { removed: true; record: OperatorKeyRecord }
  | { removed: false; why: "not_found" }
  | { removed: false; why: "lease_live"; record: OperatorKeyRecord }
  | { removed: false; why: "not_stuck"; record: OperatorKeyRecord };

const LEASE_STATE = `CASE WHEN "status" <> 'PROCESSING' THEN 'none'
  WHEN "leaseExpiresAt" > now() THEN 'live' ELSE 'expired' END AS "leaseState"`;
const OPERATOR_COLUMNS = `${COLUMNS}, "updatedAt", ${LEASE_STATE}`;
const STUCK = `("status" = 'PROCESSING' AND "leaseExpiresAt" <= now())`;
const FINISHED = `"status" IN ('COMPLETED', 'FAILED')`;
const ALLOWED: Record<KeyRemoval, string> = { bust: `(${FINISHED} OR ${STUCK})`, release: STUCK };

/** Deletes the key if, at the moment of the delete, the rule for `mode` allows it. */
export async function removeKey(
  tx: SqlTransaction,
  target: KeyTarget,
  mode: KeyRemoval,
): Promise<RemoveKeyResult> {
  const run = runnerOf(tx);
  const { where, params } = whereTarget(target);
  const [deleted] = await run.query<OperatorKeyRecord>(
    `DELETE FROM "IdempotencyKey" WHERE ${where} AND ${ALLOWED[mode]} RETURNING ${OPERATOR_COLUMNS}`,
    params,
  );
  if (deleted) {
    await announceEviction(run, deleted.scope, deleted.key);
    return { removed: true, record: deleted };
  }
  // Refused: read the row to say why (it may have changed since, but only to a state we refuse).
  const [current] = await run.query<OperatorKeyRecord>(
    `SELECT ${OPERATOR_COLUMNS} FROM "IdempotencyKey" WHERE ${where}`,
    params,
  );
  if (!current) return { removed: false, why: "not_found" };
  const why = current.leaseState === LeaseState.LIVE ? "lease_live" : "not_stuck";
  return { removed: false, why, record: current };
}

/** The key's row by id, and by scope too when given (a key of another scope is not found). */
function whereTarget(target: KeyTarget): { where: string; params: string[] } {
  return typeof target === "string"
    ? { where: `"id" = $1::uuid`, params: [target] }
    : { where: `"scope" = $2 AND "id" = $1::uuid`, params: [target.id, target.scope] };
}
