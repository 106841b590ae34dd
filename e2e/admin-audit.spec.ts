// Issue 11: the audit log filtered by actor, action and key, naming each key by its value (and
// tenant) instead of a row-id prefix. The entries the page shows are checked against the API's.
import { randomUUID } from "node:crypto";
import { expect, signIn, test } from "./fixtures";
import { insertCompletedKey, insertProcessingKeys, unique, withDb } from "./admin-db";

interface Entry {
  actor: string;
  action: string;
  targetKey: string | null;
  reason: string;
}

test.describe("admin: the audit log's filters", () => {
  test("filters by key value, action and actor, and shows the key's value", async ({
    page,
    request,
    adminApi,
  }) => {
    const run = unique();
    const busted = `audit-busted-${run}`;
    const stuckPrefix = `audit-stuck-${run}`;
    const ids = await withDb(request, async (c) => {
      const bustedId = await insertCompletedKey(c, { scope: "globex", key: busted });
      await insertProcessingKeys(c, {
        scope: "globex",
        prefix: stuckPrefix,
        n: 1,
        procedure: "checkout.placeOrder",
        expiredSecondsAgo: 60,
      });
      // Another operator's bust of a key, written as that operator's dashboard would have.
      await c.query(
        `INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "targetScope", "targetKey", "reason")
         VALUES ($1, 'key.bust', 'IdempotencyKey', gen_random_uuid()::text, 'globex', $2, 'night shift cleanup')`,
        [`night-${run}@example.com`, `audit-other-${run}`],
      );
      const stuckId = (
        await c.query<{ id: string }>(
          `SELECT "id"::text AS id FROM "IdempotencyKey" WHERE "key" = $1`,
          [`${stuckPrefix}-1`],
        )
      ).rows[0]!.id;
      return { bustedId, stuckId };
    });
    // One bust and one release by the operator, through the API as the dashboard sends them.
    const act = async (path: string, id: string, reason: string) =>
      expect(
        (await adminApi.mutate(path, { id, reason }, { "idempotency-key": randomUUID() })).status,
      ).toBe(200);
    await act("admin.keys.bust", ids.bustedId, `refund ${run}`);
    await act("admin.keys.release", ids.stuckId, `instance died ${run}`);

    await signIn(page, "admin", "/admin/audit");
    const filters = page.getByRole("search", { name: "Filter the audit log" });
    const log = page.getByRole("table", { name: "Audit log" });
    const rows = log.getByRole("row").filter({ hasText: run });

    await filters.getByLabel("Key value").fill(busted);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText("key.bust");
    // The key by its value and tenant, linking to its page (not a row-id prefix).
    await expect(rows.first().getByRole("link", { name: busted })).toHaveAttribute(
      "href",
      `/admin/keys/${ids.bustedId}`,
    );
    await expect(rows.first()).toContainText(`${busted} in globex`);

    await filters.getByLabel("Key value").fill("");
    await filters.getByLabel("Action").selectOption("key.release");
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText(`${stuckPrefix}-1`);

    await filters.getByLabel("Action").selectOption("");
    await filters.getByLabel("Actor").fill(`night-${run}@example.com`);
    await expect(rows).toHaveCount(1);
    await expect(rows.first()).toContainText("night shift cleanup");

    // The truth: the API answers the same filters with the same entries.
    const api = (input: Record<string, string>) =>
      adminApi.query<{ items: Entry[] }>("admin.audit.list", input).then((r) => r.items);
    expect((await api({ key: busted })).map((e) => [e.action, e.actor])).toEqual([
      ["key.bust", "admin@example.com"],
    ]);
    expect(
      (await api({ action: "key.release", key: `${stuckPrefix}-1` })).map((e) => e.reason),
    ).toEqual([`instance died ${run}`]);
    expect((await api({ actor: `night-${run}@example.com` })).map((e) => e.targetKey)).toEqual([
      `audit-other-${run}`,
    ]);

    // A key's page links to its entries: the filter starts from the URL.
    await page.goto(`/admin/audit?key=${encodeURIComponent(busted)}`);
    await expect(filters.getByLabel("Key value")).toHaveValue(busted);
    await expect(rows).toHaveCount(1);
  });
});
