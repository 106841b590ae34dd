// The keys list at scale: with 100 000 keys every filter's page is read from an index, never by a
// scan of the table. Asserts the plan, not a time (times are in lab/bench/admin-keys.ts).
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { seedKeys } from "../../../scripts/seed-keys";
import { keyListQuery, type KeyListFilters } from "./keys-query";

const t = useTestDatabase();
let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: t.url });
  await client.connect();
  await seedKeys(client, 100_000);
});
afterAll(async () => {
  await client?.end();
});

interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  "Relation Name"?: string;
  Plans?: PlanNode[];
}
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

async function planOf(
  filters: KeyListFilters,
  cursor: { createdAt: Date; id: string } | null = null,
): Promise<PlanNode[]> {
  const sql = keyListQuery(filters, cursor, 51);
  const res = await client.query(`EXPLAIN (FORMAT JSON) ${sql.text}`, sql.values);
  return nodes(res.rows[0]["QUERY PLAN"][0].Plan);
}

describe("admin keys list at 100 000 keys", () => {
  it.each<[string, KeyListFilters, RegExp]>([
    ["no filter", {}, /^IdempotencyKey_createdAt_id_idx$/],
    [
      "status FAILED",
      { status: "FAILED" },
      /^IdempotencyKey_(status_createdAt_id|createdAt_id)_idx$/,
    ],
    [
      "status PROCESSING",
      { status: "PROCESSING" },
      /^IdempotencyKey_(status_createdAt_id|createdAt_id)_idx$/,
    ],
    ["tenant", { scope: "acme" }, /^IdempotencyKey_(scope_createdAt_id|createdAt_id)_idx$/],
    [
      "tenant with no keys",
      { scope: "nobody" },
      /^IdempotencyKey_scope_(createdAt_id|expiresAt)_idx$|^IdempotencyKey_scope_key_key$/,
    ],
    [
      "rare procedure prefix",
      { procedurePrefix: "admin.keys.bust" },
      /^IdempotencyKey_(procedure|procedure_createdAt_id|createdAt_id)_idx$/,
    ],
    ["stuck", { stuck: true }, /^IdempotencyKey_(stuck_page_idx|pkey|createdAt_id_idx)$/],
  ])("%s: an index scan, no sequential scan", async (_name, filters, index) => {
    const plan = await planOf(filters);
    expect(plan.filter((n) => n["Node Type"] === "Seq Scan")).toEqual([]);
    const scans = plan.filter((n) => n["Index Name"]);
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans) expect(scan["Index Name"]).toMatch(index);
  });

  it("stuck + a procedure prefix: the page's ids come from the stuck index alone, the table is read only for the rows shown", async () => {
    await client.query(`VACUUM ANALYZE "IdempotencyKey"`); // as autovacuum leaves a table: its visibility map set
    for (const procedurePrefix of ["admin.", "checkout."]) {
      const sql = keyListQuery({ stuck: true, procedurePrefix }, null, 51);
      const res = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.text}`, sql.values);
      const plan = nodes(res.rows[0]["QUERY PLAN"][0].Plan) as (PlanNode & {
        "Actual Rows": number;
        "Actual Loops": number;
        "Heap Fetches"?: number;
      })[];
      const pick = plan.find((n) => n["Index Name"] === "IdempotencyKey_stuck_page_idx");
      expect(pick?.["Node Type"]).toBe("Index Only Scan");
      const rows = plan.find((n) => n["Index Name"] === "IdempotencyKey_pkey");
      expect((rows?.["Actual Rows"] ?? 0) * (rows?.["Actual Loops"] ?? 0)).toBeLessThanOrEqual(51);
    }
    // Two steps, the same page as one: newest first, only stuck keys of that procedure.
    const page = await client.query(
      keyListQuery({ stuck: true, procedurePrefix: "checkout." }, null, 51).text,
      keyListQuery({ stuck: true, procedurePrefix: "checkout." }, null, 51).values,
    );
    const direct =
      await client.query(`SELECT "id"::text AS id FROM "IdempotencyKey" WHERE "status" = 'PROCESSING' AND "leaseExpiresAt" <= now()
      AND "procedure" LIKE 'checkout.%' ORDER BY "createdAt" DESC, "id" DESC LIMIT 51`);
    expect(page.rows.map((r) => r.id)).toEqual(direct.rows.map((r) => r.id));
    expect(page.rows.length).toBeGreaterThan(0);
  });

  it("starts a deep page at the cursor (no scan from the top)", async () => {
    const deep = (
      await client.query(
        `SELECT "createdAt", "id"::text AS id FROM "IdempotencyKey" ORDER BY "createdAt" DESC, "id" DESC OFFSET 90000 LIMIT 1`,
      )
    ).rows[0];
    const sql = keyListQuery({}, deep, 51);
    const res = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql.text}`, sql.values);
    const top = res.rows[0]["QUERY PLAN"][0].Plan as PlanNode & {
      Plans: (PlanNode & {
        "Actual Rows": number;
        "Rows Removed by Filter"?: number;
        "Index Cond"?: string;
      })[];
    };
    const scan = nodes(top).find((n) => n["Index Name"]) as PlanNode & {
      "Index Cond"?: string;
      "Rows Removed by Filter"?: number;
    };
    expect(scan["Index Name"]).toBe("IdempotencyKey_createdAt_id_idx");
    expect(scan["Index Cond"]).toMatch(/ROW\("createdAt", id\) < ROW/);
    expect(scan["Rows Removed by Filter"] ?? 0).toBe(0);
  });
});
