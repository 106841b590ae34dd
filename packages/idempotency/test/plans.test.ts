// The statements that address one key reach it through a unique index (the primary key, or
// (scope, key)), in the plan PostgreSQL keeps for a prepared statement, on a table shaped as in
// production: most keys finished, a few in flight, several scopes, statistics up to date.
//
// Why it needs a test: a status-leading index (the package's own (status, leaseExpiresAt), or a
// dashboard's stuck-lease index) is estimated cheaper for `"status" = 'PROCESSING' AND … "id" = $1`
// once PROCESSING is rare: PostgreSQL then scans every in-flight key of the scope, and every
// entry of a key that finished since the last vacuum, at each completion (measured: 0.42 against
// 0.31 ms a completion in `npm run bench`'s process, growing with the keys in flight).
import { describe, expect, it } from "vitest";
import * as SQL from "../src/store/sql";
import { useTestDatabase } from "./support/database";

const t = useTestDatabase();

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

async function genericPlanScans(text: string): Promise<string[]> {
  const { rows } = await t.pool.query<{ "QUERY PLAN": unknown }>(
    `EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${text}`,
  );
  return keyTableScans(rows[0]!["QUERY PLAN"]);
}

/** Statements that find one key by its id or its (scope, key), with the index each should use. */
const ONE_KEY = {
  "finish (plain)": SQL.FINISH.plain,
  "finish (announcing)": SQL.FINISH.notifying,
  "release (plain)": SQL.RELEASE.plain,
  "release (announcing)": SQL.RELEASE.notifying,
  "mark awaited": SQL.MARK_AWAITED,
  read: SQL.READ,
};
const UNIQUE = ["IdempotencyKey_pkey", "IdempotencyKey_scope_key_key"];

/**
 * What a deployment's table looks like when autovacuum analyses it in a quiet moment: 12 000
 * finished keys over 3 scopes and none in flight, so the statistics say no key is PROCESSING.
 * Keys in flight come later, when the plans are already made.
 */
async function fillAsAnalysedWhenQuiet() {
  await t.pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "responseStatus", "responseBody", "completedAt", "expiresAt")
    SELECT 'tenant-' || (n % 3), 'plan-' || n, 'checkout.placeOrder', repeat('0', 64), 'COMPLETED',
      200, '{"ok":true}', now(), now() + interval '1 day'
    FROM generate_series(1, 12000) AS n`);
  await t.pool.query(`ANALYZE "IdempotencyKey"`);
  await t.pool.query(`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status",
      "leaseToken", "leaseExpiresAt", "expiresAt")
    SELECT 'tenant-' || (n % 3), 'flight-' || n, 'checkout.placeOrder', repeat('0', 64),
      'PROCESSING', gen_random_uuid(), now() + interval '30 seconds', now() + interval '1 day'
    FROM generate_series(1, 300) AS n`);
}

/** Every statement of ONE_KEY, planned generically, reads the table through a unique index. */
async function expectUniqueIndexes() {
  for (const [name, statement] of Object.entries(ONE_KEY)) {
    const scans = await genericPlanScans(statement.text);
    expect(scans.length, name).toBeGreaterThan(0);
    for (const scan of scans) expect(UNIQUE, `${name} scans ${scan}`).toContain(scan);
  }
}

describe("a statement about one key", () => {
  it("reaches it through the primary key or (scope, key), also beside a dashboard's status-leading indexes", async () => {
    await fillAsAnalysedWhenQuiet();
    await expectUniqueIndexes();
    // The app's status filter and stuck-lease page (prisma/migrations 0005, 0009): an adopter's
    // dashboard may add the same. A new index is considered at once, on the same statistics.
    await t.pool.query(`
      CREATE INDEX "plans_status_createdAt_id_idx" ON "IdempotencyKey"("status", "createdAt" DESC, "id" DESC);
      CREATE INDEX "plans_stuck_page_idx" ON "IdempotencyKey"("status", "leaseExpiresAt", "scope", "procedure", "createdAt", "id");`);
    await expectUniqueIndexes();
  });
});
