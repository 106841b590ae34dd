// The statements that address one key reach it by its id or its key, in the plan PostgreSQL keeps
// for a prepared statement: on a table never analysed (a deployment's first minute), and on one
// analysed in a quiet moment (no key in flight, as far as the statistics know), with the
// package's indexes and beside the app's dashboard indexes.
//
// Why it needs a test: with the key's status in its condition, a status-leading index (the
// package's own (status, leaseExpiresAt), a dashboard's stuck-lease index) looks cheapest once the
// statistics say PROCESSING is rare, and PostgreSQL then reads every in-flight key of the scope,
// and every entry a settled key left until the next vacuum, at each completion (measured: 0.31–0.42
// against 0.14 ms of PostgreSQL time a completion, growing with the keys in flight). And with the
// scope in its condition but not the key, PostgreSQL takes the (scope, key) index with the scope
// alone as its condition on a table it knows little about, and reads every key of the scope
// (measured: a completion's round trip 0.4 → 1.5 ms after a few thousand keys of one scope): an
// index name is not enough, its condition must name the whole key.
import type pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import * as SQL from "../src/store/sql";
import { createTestDatabase } from "./support/database";

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
/**
 * Indexes that lead to one key, and the columns their condition must name to reach it: its id, its
 * (scope, key), or its key alone (the app's search).
 */
const UNIQUE: Record<string, string[]> = {
  IdempotencyKey_pkey: ["id"],
  IdempotencyKey_scope_key_key: ["scope", "key"],
  IdempotencyKey_key_idx: ["key"],
};

/** How a plan reads "IdempotencyKey": each index with its condition, or a full scan. */
interface Scan {
  index: string;
  condition: string;
}

function keyTableScans(plan: unknown): Scan[] {
  const found: Scan[] = [];
  const visit = (node: Record<string, unknown>) => {
    const index = node["Index Name"] as string | undefined;
    if (index) found.push({ index, condition: (node["Index Cond"] as string | undefined) ?? "" });
    else if (node["Relation Name"] === "IdempotencyKey" && node["Node Type"] === "Seq Scan")
      found.push({ index: "Seq Scan", condition: "" });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit((plan as [{ Plan: Record<string, unknown> }])[0].Plan);
  return found;
}

/** The columns an index condition compares with `=` (`(scope = $10)`, `((key)::text = $11)`). */
const equalColumns = (condition: string) =>
  [...condition.matchAll(/\(*"?(\w+)"?\)?(?:::\w+)? = /g)].map((m) => m[1]);

/** Every statement of ONE_KEY, planned generically, reads the table through one of those. */
async function expectUniqueIndexes(pool: pg.Pool) {
  for (const [name, statement] of Object.entries(ONE_KEY)) {
    const { rows } = await pool.query<{ "QUERY PLAN": unknown }>(
      `EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${statement.text}`,
    );
    const scans = keyTableScans(rows[0]!["QUERY PLAN"]);
    expect(scans.length, name).toBeGreaterThan(0);
    for (const { index, condition } of scans) {
      expect(Object.keys(UNIQUE), `${name} scans ${index}`).toContain(index);
      const named = equalColumns(condition);
      for (const column of UNIQUE[index]!)
        expect(named, `${name} scans ${index} on ${condition}`).toContain(column);
    }
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

/** Keys spread over three tenants, or all of one (a single-tenant deployment, a benchmark). */
const finished = (pool: pg.Pool, count: number, scopes = 3) =>
  pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "responseStatus", "responseBody", "completedAt", "expiresAt")
    SELECT 'tenant-' || (n % ${scopes}), 'done-' || n, 'checkout.placeOrder', repeat('0', 64), 'COMPLETED',
      200, '{"ok":true}', now(), now() + interval '1 day'
    FROM generate_series(1, ${count}) AS n`);

const inFlight = (pool: pg.Pool, count: number, scopes = 3) =>
  pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT 'tenant-' || (n % ${scopes}), 'flight-' || n, 'checkout.placeOrder', repeat('0', 64),
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

// A table of one tenant's keys that PostgreSQL knows little about: the scope alone looks as
// selective as the id, and the plan kept for the prepared statement reads the whole scope once the
// table has grown. With the app's indexes (the key's own index beside (scope, key)) the statements
// that name the key reach it in one lookup. With the package's indexes alone, (scope, expiresAt)
// still looks cheapest to PostgreSQL there until the table is analysed (docs/benchmarks.md).
describe("a statement about one key, the app's indexes, one scope", () => {
  // One tenant's keys, on a table never analysed: a new single-tenant deployment's first minute.
  it("does on a table never analysed that holds one scope's keys", async () => {
    const pool = await keyTable("dashboard");
    await inFlight(pool, 20, 1);
    await expectUniqueIndexes(pool);
  });

  // Analysed when it held a key or two, then grown: the statistics know one scope and a page, so
  // a condition on the scope looks as selective as one on the id.
  it("does when the statistics saw one key and the table grew since", async () => {
    const pool = await keyTable("dashboard");
    await inFlight(pool, 1, 1);
    await pool.query(`ANALYZE "IdempotencyKey"`);
    await finished(pool, 5_000, 1);
    await expectUniqueIndexes(pool);
  });
});
