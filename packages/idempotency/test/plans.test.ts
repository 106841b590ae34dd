// The statements that address one key reach it by its id or its key, in the plan PostgreSQL keeps
// for a prepared statement: on a table never analysed (a deployment's first minute), and on one
// analysed in a quiet moment (no key in flight, as far as the statistics know), with the
// package's indexes and beside the app's dashboard indexes.
//
// Why it needs a test: with the key's status in its condition, a status-leading index (the
// package's own (status, leaseExpiresAt), a dashboard's stuck-lease index) looks cheapest once the
// statistics say PROCESSING is rare, and PostgreSQL then reads every in-flight key of the scope,
// and every entry a settled key left until the next vacuum, at each completion (measured: 0.31–0.42
// against 0.14 ms of PostgreSQL time a completion, growing with the keys in flight).
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import * as SQL from "../src/store/sql";
import { createTestDatabase } from "./support/database";

/** How a plan reads "IdempotencyKey": the indexes it scans, and "Seq Scan" for a full scan. */
function keyTableScans(plan: unknown): string[] {
  const found: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    const index = node["Index Name"] as string | undefined;
    if (index) found.push(index);
    else if (node["Relation Name"] === "IdempotencyKey" && node["Node Type"] === "Seq Scan")
      found.push("Seq Scan");
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((plan as [{ Plan: Record<string, unknown> }])[0].Plan);
  return found;
}

/**
 * Statements that find one key by its id or its (scope, key). Not here: the renewal of a key past
 * its retention, which may read the expired keys not yet reaped through the expiresAt index (a
 * rare path, and the reaper keeps that set small).
 */
const ONE_KEY = {
  "finish (plain)": SQL.FINISH.plain,
  "finish (announcing)": SQL.FINISH.notifying,
  "release (plain)": SQL.RELEASE.plain,
  "release (announcing)": SQL.RELEASE.notifying,
  "mark awaited": SQL.MARK_AWAITED,
  read: SQL.READ,
  "take over": SQL.TAKE_OVER,
};
/** Indexes that lead to one key: its id, its (scope, key), or its key alone (the app's search). */
const UNIQUE = ["IdempotencyKey_pkey", "IdempotencyKey_scope_key_key", "IdempotencyKey_key_idx"];

/** Every statement of ONE_KEY, planned generically, reads the table through one of those. */
async function expectUniqueIndexes(pool: pg.Pool) {
  for (const [name, statement] of Object.entries(ONE_KEY)) {
    const { rows } = await pool.query<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${statement.text}`,
    );
    const scans = keyTableScans(rows[0]!["QUERY PLAN"]);
    expect(scans.length, name).toBeGreaterThan(0);
    for (const scan of scans) expect(UNIQUE, `${name} scans ${scan}`).toContain(scan);
  }
}

/**
 * The app's own indexes beside the package's (prisma/migrations 0001, 0005, 0009): its dashboard's
 * filters and stuck-lease page, status-leading and scope-leading ones. An adopter's dashboard may
 * add the same.
 */
const DASHBOARD_INDEXES = `
  CREATE INDEX ON "IdempotencyKey"("createdAt" DESC, "id" DESC);
  CREATE INDEX ON "IdempotencyKey"("status", "createdAt" DESC, "id" DESC);
  CREATE INDEX ON "IdempotencyKey"("scope", "createdAt" DESC, "id" DESC);
  CREATE INDEX ON "IdempotencyKey"("procedure", "createdAt" DESC, "id" DESC);
  CREATE INDEX ON "IdempotencyKey"("key" text_pattern_ops);
  CREATE INDEX ON "IdempotencyKey"("procedure" text_pattern_ops);
  CREATE INDEX ON "IdempotencyKey"("status", "leaseExpiresAt", "scope", "procedure", "createdAt", "id");`;

const finished = (pool: pg.Pool, count: number) =>
  pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "responseStatus", "responseBody", "completedAt", "expiresAt")
    SELECT 'tenant-' || (n % 3), 'done-' || n, 'checkout.placeOrder', repeat('0', 64), 'COMPLETED',
      200, '{"ok":true}', now(), now() + interval '1 day'
    FROM generate_series(1, ${count}) AS n`);

const inFlight = (pool: pg.Pool, count: number) =>
  pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT 'tenant-' || (n % 3), 'flight-' || n, 'checkout.placeOrder', repeat('0', 64),
      'PROCESSING', gen_random_uuid(), now() + interval '30 seconds', now() + interval '1 day'
    FROM generate_series(1, ${count}) AS n`);

const dropped: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const drop of dropped.splice(0)) await drop();
});

/** A database of its own, the key table made by sql/migration.sql, and the dashboard's indexes. */
async function keyTable(indexes: "package" | "dashboard"): Promise<pg.Pool> {
  const database = await createTestDatabase(2);
  dropped.push(database.drop);
  if (indexes === "dashboard") await database.pool.query(DASHBOARD_INDEXES);
  return database.pool;
}

describe.each(["package", "dashboard"] as const)(
  "a statement about one key, %s indexes",
  (indexes) => {
    // Before autovacuum first analyses the table (a new deployment's first minute, every test
    // database): PostgreSQL plans on a guess of the table, and keys already arrive.
    it("reaches it through its id or its key on a table never analysed", async () => {
      const pool = await keyTable(indexes);
      await finished(pool, 3_000);
      await inFlight(pool, 100);
      await expectUniqueIndexes(pool);
    });

    // A deployment's table as autovacuum analyses it in a quiet moment: its statistics say no key
    // is PROCESSING; the keys in flight come later, when the plans are made.
    it("does when the statistics saw no key in flight", async () => {
      const pool = await keyTable(indexes);
      await finished(pool, 12_000);
      await pool.query(`ANALYZE "IdempotencyKey"`);
      await inFlight(pool, 300);
      await expectUniqueIndexes(pool);
    });
  },
);
