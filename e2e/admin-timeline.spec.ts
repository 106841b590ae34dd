// Issue 11: a key's timeline, derived from the key row and the audit log: reserved, completed,
// busted (who and why), then the same value used again. And a stuck lease reads "expired 3 min
// ago (stuck)", never "until <a past time>". Truth through the API.
import { randomUUID } from "node:crypto";
import { ACCOUNTS, Api, expect, signIn, test as base } from "./fixtures";
import { insertProcessingKeys, unique, withDb } from "./admin-db";

const test = base.extend<{ globexApi: Api }>({
  globexApi: async ({ request }, use) => use(new Api(request, ACCOUNTS.globex.token)),
});

interface TimelineEvent {
  kind: string;
  rowId: string;
  actor?: string;
  reason?: string;
}

test.describe("admin: a key's timeline", () => {
  test("shows both lives of a key value: reserved, completed, busted by whom and why, reserved again, completed", async ({
    page,
    globexApi,
    adminApi,
  }) => {
    const key = `e2e-timeline-${randomUUID()}`;
    const stickers = (await globexApi.products()).find((p) => p.name === "Sticker pack")!;
    const order = () =>
      globexApi.mutate(
        "checkout.placeOrder",
        { items: [{ productId: stickers.id, quantity: 1 }] },
        { "idempotency-key": key },
      );
    expect((await order()).status).toBe(200);

    await signIn(page, "admin", "/admin");
    await page.goto(`/admin/keys/${encodeURIComponent(key)}?tenant=globex`);
    const reason = "Card reversed by the bank; let the shopper pay again";
    await page.getByLabel("Reason").fill(reason);
    await page.getByRole("button", { name: "Bust key" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Key busted" })).toBeVisible();
    expect((await order()).status).toBe(200); // the same value, a new row

    await page.goto(`/admin/keys/${encodeURIComponent(key)}?tenant=globex`);
    const timeline = page.getByRole("list", { name: "Timeline" });
    const items = timeline.getByRole("listitem");
    await expect(items).toHaveCount(5);
    await expect(items.nth(0)).toContainText(/reserved.*\(row 1\)/);
    await expect(items.nth(1)).toContainText(/completed \(200\)/);
    await expect(items.nth(2)).toContainText(`busted by admin@example.com: “${reason}”`);
    await expect(items.nth(3)).toContainText(/reserved.*\(row 2, this one\)/);
    await expect(items.nth(4)).toContainText(/completed \(200\).*\(row 2, this one\)/);

    const [current] = (
      await adminApi.query<{ items: { id: string }[] }>("admin.keys.resolve", {
        ref: key,
        tenant: "globex",
      })
    ).items;
    const detail = await adminApi.query<{ timeline: TimelineEvent[] }>("admin.keys.byId", {
      id: current!.id,
    });
    expect(detail.timeline.map((e) => e.kind)).toEqual([
      "reserved",
      "completed",
      "busted",
      "reserved",
      "completed",
    ]);
    expect(detail.timeline[2]).toMatchObject({ actor: "admin@example.com", reason });
    expect(detail.timeline.slice(3).every((e) => e.rowId === current!.id)).toBe(true);
  });

  test("a stuck lease reads 'expired 3 min ago (stuck)' in the table, the detail and the timeline", async ({
    page,
    request,
    adminApi,
  }) => {
    const prefix = `e2e-stuck3-${unique()}`;
    await withDb(request, (c) =>
      insertProcessingKeys(c, {
        scope: "globex",
        prefix,
        n: 1,
        procedure: "checkout.placeOrder",
        expiredSecondsAgo: 185,
      }),
    );
    const key = `${prefix}-1`;
    await signIn(page, "admin", "/admin");
    await page.getByLabel("Stuck leases only").check();
    const row = page
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: key, exact: true }) });
    await expect(row).toContainText(/expired 3 min ago \(stuck\)/);
    await expect(row).not.toContainText("until");
    await row.getByRole("link", { name: key }).click();
    await expect(page.getByLabel("Key detail")).toContainText(/expired 3 min ago \(stuck\)/);
    await expect(page.getByRole("list", { name: "Timeline" })).toContainText(
      /lease expired 3 min ago \(stuck\)/,
    );

    const found = await adminApi.query<{
      items: { leaseState: string; leaseRemainingMs: number }[];
    }>("admin.keys.search", { q: key, tenant: "globex" });
    expect(found.items[0]!.leaseState).toBe("expired");
    expect(found.items[0]!.leaseRemainingMs).toBeLessThan(-180_000);
  });
});
