// The key store's statements. Parameters are positional ($1 …) so the same text runs through
// Prisma's raw queries and straight through a pg pool. Every statement names the key's scope: a key
// table partitioned (or distributed, on Citus) by scope then finds the key in one partition (one
// shard) instead of probing all of them (docs/scale.md).
//
// A statement that names the scope and finds the row by its id names the key as well (FINISH,
// RELEASE, TAKE_OVER, RENEW_EXPIRED): `"scope" = $n` alone is an index condition on every
// scope-leading index ((scope, key) first of all), and on a table PostgreSQL knows little about (new,
// or analysed when it held a few keys) it takes one of those as cheap as the primary key and keeps
// that plan for the prepared statement, reading every key of the scope at each completion
// (measured: a completion's round trip 0.4 → 1.5 ms after a few thousand keys, and growing, npm run
// bench -- --baseline). With the key named, the (scope, key) index finds the one row too, whichever
// index is taken (test/plans.test.ts).
import { createHash } from "node:crypto";
import { SETTLED_CHANNEL } from "../constants.js";

/**
 * A statement with a name, so a runner that prepares statements (poolRunner with `prepare`) has
 * PostgreSQL parse and plan it once per connection instead of on every call. Planning is most of
 * a short statement's server time: measured, the reservation costs 0.30 ms prepared, 0.62 ms not.
 */
export interface NamedStatement {
  readonly name: string;
  readonly text: string;
}

/**
 * The name carries a hash of the text: behind a pooler that shares server connections, a statement
 * another version of this package prepared under the same plain name (other text, other
 * parameters) is never run in its place.
 */
const named = (name: string, text: string): NamedStatement => ({
  name: `once_${name}_${createHash("sha256").update(text).digest("hex").slice(0, 12)}`,
  text,
});

export const COLUMNS = `"id", "scope", "key", "procedure", "fingerprint", "status"::text AS "status",
  "leaseToken"::text AS "leaseToken", "leaseExpiresAt", "attempts", "responseStatus", "responseBody",
  "responseContentType", "responseBytes", "responseHeaders", "responseOmittedBytes", "createdAt", "completedAt", "expiresAt", now() AS "dbNow"`;

const leaseEnd = (param: string) => `now() + make_interval(secs => ${param}::float8 / 1000)`;
const retentionEnd = (param: string) => `now() + make_interval(secs => ${param}::float8)`;

/**
 * Insert, or return the row that holds the key, in one round trip. All parts of a WITH statement
 * share one snapshot, so a row committed by a racing insert *during* this statement is invisible
 * to its SELECT: then neither part returns a row and the caller reads again.
 *
 * The reservation commits with synchronous_commit off, for this statement's own transaction only
 * (set_config(…, true) is transaction-local, so it is safe through a transaction-mode pooler).
 * Nothing depends on a reservation until the business transaction commits, synchronously, which
 * flushes the WAL up to its own commit record and so the reservation's too. A reservation lost in a
 * crash had no committed effect: its retry executes. `"cfg"` is joined so the setting is applied.
 * $1 scope, $2 key, $3 procedure, $4 fingerprint, $5 lease token, $6 lease ms, $7 ttl seconds.
 */
export const RESERVE = named(
  "reserve",
  `
  WITH "cfg" AS (SELECT set_config('synchronous_commit', 'off', true)),
  "inserted" AS (
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT $1, $2, $3, $4, 'PROCESSING', $5::uuid, ${leaseEnd("$6")}, ${retentionEnd("$7")} FROM "cfg"
    ON CONFLICT ("scope", "key") DO NOTHING
    RETURNING ${COLUMNS}, true AS "inserted"
  )
  SELECT * FROM "inserted"
  UNION ALL
  SELECT ${COLUMNS}, false AS "inserted" FROM "IdempotencyKey"
  WHERE "scope" = $1 AND "key" = $2 AND NOT EXISTS (SELECT 1 FROM "inserted")`,
);

export const READ = named(
  "read",
  `SELECT ${COLUMNS} FROM "IdempotencyKey" WHERE "scope" = $1 AND "key" = $2`,
);

/**
 * A request about to wait on a key (Prefer: wait) marks it as awaited, so that its settle
 * announces itself (FINISH, RELEASE): a settle nobody waits for sends no NOTIFY. Marks only the
 * lease it saw, still PROCESSING (a key holds a token only then, see FINISH). The update takes the
 * row's lock, so it and the settle are ordered: marked first, the settle sees the mark and
 * notifies; settled first (or settling: the update waits for that commit and then finds the row
 * changed), no row comes back and the caller reads the key again instead of sleeping. The rows
 * come from the update alone, never from the statement's snapshot, which may predate that settle.
 * $1 scope, $2 key, $3 lease token.
 */
export const MARK_AWAITED = named(
  "mark_awaited",
  `
  UPDATE "IdempotencyKey" SET "awaited" = true
  WHERE "scope" = $1 AND "key" = $2 AND "leaseToken" = $3::uuid
  RETURNING ${COLUMNS}`,
);

/**
 * Takes over the lease it saw expire: fenced by that lease's token (so by PROCESSING, see FINISH),
 * which another takeover replaces first. $1 id, $2 new lease token, $3 lease ms, $4 scope, $5 the
 * expired lease's token, $6 key.
 */
export const TAKE_OVER = named(
  "take_over",
  `
  UPDATE "IdempotencyKey"
  SET "leaseToken" = $2::uuid, "leaseExpiresAt" = ${leaseEnd("$3")}, "attempts" = "attempts" + 1, "updatedAt" = now()
  WHERE "scope" = $4 AND "key" = $6 AND "id" = $1::uuid AND "leaseToken" = $5::uuid AND "leaseExpiresAt" <= now() AND "expiresAt" > now()
  RETURNING ${COLUMNS}`,
);

/**
 * $1 id, $2 new lease token, $3 lease ms, $4 procedure, $5 fingerprint, $6 ttl seconds, $7 scope,
 * $8 key.
 */
export const RENEW_EXPIRED = named(
  "renew_expired",
  `
  UPDATE "IdempotencyKey"
  SET "procedure" = $4, "fingerprint" = $5, "status" = 'PROCESSING', "leaseToken" = $2::uuid,
      "leaseExpiresAt" = ${leaseEnd("$3")}, "attempts" = 1, "responseStatus" = NULL, "responseBody" = NULL,
      "responseContentType" = NULL, "responseBytes" = NULL, "responseHeaders" = NULL, "responseOmittedBytes" = NULL, "completedAt" = NULL, "awaited" = false, "createdAt" = now(), "updatedAt" = now(),
      "expiresAt" = ${retentionEnd("$6")}
  WHERE "scope" = $7 AND "key" = $8 AND "id" = $1::uuid AND "expiresAt" <= now() AND ("status" <> 'PROCESSING' OR "leaseExpiresAt" <= now())
  RETURNING ${COLUMNS}`,
);

/**
 * The settling statements (finish, release) in two forms: plain, and announcing the settle on
 * SETTLED_CHANNEL so requests waiting on the key (Prefer: wait) wake. The NOTIFY is part of the
 * statement, so it is sent only if the row changed, only if a waiter marked the key
 * (MARK_AWAITED), and only when its transaction commits: a waiter woken by it reads the committed
 * answer. A NOTIFY on every settle cost 3–25 % of the keys a second (docs/scale.md): PostgreSQL
 * appends to its notification queue under one lock at each commit and signals every listener.
 * Each returns one row per settled key, with the backend's pid (the commit-warning watch files
 * PostgreSQL's warnings by it).
 */
export interface SettlingStatement {
  plain: NamedStatement;
  notifying: NamedStatement;
}

const settling = (name: string, change: string): SettlingStatement => ({
  plain: named(
    name,
    `WITH "done" AS (${change} RETURNING 1) SELECT 1 AS "n", pg_backend_pid() AS "pid" FROM "done"`,
  ),
  notifying: named(
    `${name}_notify`,
    `WITH "done" AS (${change} RETURNING "scope", "key", "awaited")
     SELECT 1 AS "n", pg_backend_pid() AS "pid" FROM "done"
     LEFT JOIN LATERAL (SELECT pg_notify('${SETTLED_CHANNEL}', json_build_array("done"."scope", "done"."key")::text) WHERE "done"."awaited") AS "sent" ON true`,
  ),
});

/**
 * The fence is the lease token alone. A key holds a token exactly while it is PROCESSING: the
 * reservation, a takeover and a renewal set one with the status, and every statement that ends
 * PROCESSING clears it (FINISH) or deletes the row. The status is not repeated in these
 * conditions on purpose: with it, PostgreSQL plans the statement through a status-leading index
 * (this package's (status, leaseExpiresAt), a dashboard's stuck-lease index) whenever the table's
 * statistics say hardly any key is in flight, as after an ANALYZE in a quiet moment, and then
 * scans every in-flight key of the scope, and every entry left by a key settled since the last
 * vacuum, at each completion. Without it, and with the key named beside the scope (see the top of
 * this file), only the primary key or (scope, key) can find the row (test/plans.test.ts).
 *
 * $1 id, $2 lease token, $3 final status, $4 status code, $5 body, $6 content type, $7 body bytes,
 * $8 headers (JSON text), $9 omitted body's size, $10 scope, $11 key.
 */
export const FINISH = settling(
  "finish",
  `
  UPDATE "IdempotencyKey"
  SET "status" = $3::"IdempotencyStatus", "responseStatus" = $4, "responseBody" = $5, "responseContentType" = $6,
      "responseBytes" = $7::bytea, "responseHeaders" = $8::jsonb, "responseOmittedBytes" = $9::int,
      "completedAt" = now(), "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
  WHERE "scope" = $10 AND "key" = $11 AND "id" = $1::uuid AND "leaseToken" = $2::uuid`,
);

/** Fenced by the lease token alone, as FINISH is. $1 id, $2 lease token, $3 scope, $4 key. */
export const RELEASE = settling(
  "release",
  `
  DELETE FROM "IdempotencyKey" WHERE "scope" = $3 AND "key" = $4 AND "id" = $1::uuid AND "leaseToken" = $2::uuid`,
);
/** Bounded count: at most $2 rows are read, whatever the scope holds. */
export const COUNT_LIVE = named(
  "count_live",
  `
  SELECT count(*)::int AS "n" FROM (
    SELECT 1 FROM "IdempotencyKey" WHERE "scope" = $1 AND "expiresAt" > now() LIMIT $2
  ) AS "live"`,
);

/** A unique index's columns in index order (for a unique violation that names only the index). */
export const INDEX_COLUMNS = `SELECT a."attname" AS "column" FROM pg_index i
  CROSS JOIN LATERAL unnest(i."indkey") WITH ORDINALITY AS k("attnum", "n")
  JOIN pg_attribute a ON a."attrelid" = i."indrelid" AND a."attnum" = k."attnum"
  WHERE i."indexrelid" = to_regclass(quote_ident($1)) ORDER BY k."n"`;
