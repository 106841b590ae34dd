// Issue 11: 2 000 leases stuck after an instance died, released at once from the keys filter with
// one reason. The server frees them in bounded batches, each key re-checked and audited; a live
// lease and another procedure's stuck keys under the same tenant stay. Truth read from the
// database.
import { expect, signIn, test } from "./fixtures";
import { insertProcessingKeys, unique, withDb } from "./admin-db";

test.describe("admin: release stuck leases in bulk", () => {
  test("releases the 2 000 stuck leases a tenant + procedure prefix selects, each audited with the one reason", async ({
    page,
    request,
  }) => {
    test.setTimeout(120_000);
    const proc = `bulk${unique()}`;
    await withDb(request, async (c) => {
      await insertProcessingKeys(c, {
        scope: "globex",
        prefix: `${proc}-dead`,
        n: 2000,
        procedure: `${proc}.charge`,
        expiredSecondsAgo: 120,
      });
      await insertProcessingKeys(c, {
        scope: "globex",
        prefix: `${proc}-running`,
        n: 1,
        procedure: `${proc}.charge`,
        expiredSecondsAgo: -600,
      });
      await insertProcessingKeys(c, {
        scope: "globex",
        prefix: `${proc}-elsewhere`,
        n: 3,
        procedure: `other${proc}.charge`,
        expiredSecondsAgo: 120,
      });
    });

    await signIn(page, "admin", "/admin");
    await page.getByLabel("Stuck leases only").check();
    await page.getByRole("textbox", { name: "Tenant", exact: true }).fill("globex");
    await page.getByRole("textbox", { name: "Procedure starts with" }).fill(`${proc}.`);
    const bulk = page.getByRole("region", { name: "Release stuck leases in bulk" });
    await expect(bulk.getByText("2000 stuck leases match this filter")).toBeVisible();
    const reason = "Instance b7 died at 09:12 holding these leases; nothing committed";
    await bulk.getByLabel("Reason for the bulk release").fill(reason);
    await bulk.getByRole("button", { name: "Release 2000 stuck leases" }).click();
    await expect(
      bulk.getByRole("status").filter({ hasText: "Released 2000 stuck leases, each audited." }),
    ).toBeVisible({ timeout: 60_000 });
    await expect(bulk.getByText("0 stuck leases match this filter")).toBeVisible();

    await withDb(request, async (c) => {
      const left = await c.query<{ key: string }>(
        `SELECT "key" FROM "IdempotencyKey" WHERE "procedure" = $1 ORDER BY "key"`,
        [`${proc}.charge`],
      );
      expect(left.rows.map((r) => r.key)).toEqual([`${proc}-running-1`]);
      const elsewhere = await c.query(`SELECT 1 FROM "IdempotencyKey" WHERE "procedure" = $1`, [
        `other${proc}.charge`,
      ]);
      expect(elsewhere.rowCount).toBe(3);
      const audit = await c.query<{ n: number; keys: number; reasons: number; actors: string[] }>(
        `SELECT count(*)::int AS n, count(DISTINCT "targetKey")::int AS keys, count(DISTINCT "reason")::int AS reasons, array_agg(DISTINCT "actor") AS actors
         FROM "AuditEntry" WHERE "action" = 'key.release' AND "targetScope" = 'globex' AND "targetKey" LIKE $1`,
        [`${proc}-dead-%`],
      );
      expect(audit.rows[0]).toEqual({
        n: 2000,
        keys: 2000,
        reasons: 1,
        actors: ["admin@example.com"],
      });
      const r = await c.query(
        `SELECT 1 FROM "AuditEntry" WHERE "targetKey" = $1 AND "reason" = $2`,
        [`${proc}-dead-1`, reason],
      );
      expect(r.rowCount).toBe(1);
    });
  });
});
