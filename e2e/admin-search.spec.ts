// Issue 11: find a key by its value, from the search box and by URL (/admin/keys/<value>), across
// tenants or within one. The truth is read back through the API.
import { expect, signIn, test } from "./fixtures";
import { insertCompletedKey, unique, withDb } from "./admin-db";

interface Found {
  id: string;
  tenant: string;
  key: string;
}

test.describe("admin: find a key by its value", () => {
  test("the search box finds a value across tenants, within one, and by its start", async ({
    page,
    request,
    adminApi,
  }) => {
    const value = `ticket-${unique()}`;
    await withDb(request, async (c) => {
      await insertCompletedKey(c, { scope: "acme", key: value });
      await insertCompletedKey(c, { scope: "globex", key: value });
      await insertCompletedKey(c, { scope: "globex", key: `${value}-retry` });
    });
    await signIn(page, "admin", "/admin");
    const search = page.getByRole("search", { name: "Find a key by its value" });
    await search.getByLabel("Key value").fill(value);
    await search.getByRole("button", { name: "Find" }).click();
    const found = page.getByRole("table", { name: "Keys found" });
    // An exact match sorts before longer keys with the same start.
    await expect(found.getByRole("row")).toHaveCount(4);
    await expect(found.getByRole("row").nth(1)).toContainText("acme");
    await expect(found.getByRole("row").nth(2)).toContainText("globex");
    await expect(found.getByRole("link", { name: `${value}-retry` })).toBeVisible();

    await search.getByLabel("In tenant").fill("acme");
    await search.getByRole("button", { name: "Find" }).click();
    await expect(found.getByRole("row")).toHaveCount(2);
    await found.getByRole("link", { name: value, exact: true }).click();
    await expect(page.getByRole("heading", { name: `Key ${value}` })).toBeVisible();
    await expect(page.getByLabel("Key detail")).toContainText("acme");

    // The truth: the page opened acme's row, the one the API finds for (acme, value).
    const api = await adminApi.query<{ items: Found[] }>("admin.keys.search", {
      q: value,
      tenant: "acme",
    });
    expect(api.items).toHaveLength(1);
    await expect(page).toHaveURL(new RegExp(`/admin/keys/${api.items[0]!.id}$`));
  });

  test("/admin/keys/<value> opens the key, lists the tenants that share a value, and ?tenant= picks one", async ({
    page,
    request,
    adminApi,
  }) => {
    const value = `order intent/${unique()} 50%`; // a space, a slash and a percent sign: all must survive the URL
    const ids = await withDb(request, async (c) => ({
      acme: await insertCompletedKey(c, { scope: "acme", key: value }),
      globex: await insertCompletedKey(c, { scope: "globex", key: value }),
    }));
    await signIn(page, "admin", "/admin");
    await page.goto(`/admin/keys/${encodeURIComponent(value)}`);
    await expect(page.getByText("2 tenants used this key value")).toBeVisible();
    const choices = page.getByRole("table", { name: "Keys with this value" });
    await expect(choices.getByRole("link", { name: "acme" })).toHaveAttribute(
      "href",
      `/admin/keys/${ids.acme}`,
    );

    await page.goto(`/admin/keys/${encodeURIComponent(value)}?tenant=globex`);
    await expect(page.getByRole("heading", { name: `Key ${value}` })).toBeVisible();
    await expect(page.getByLabel("Key detail")).toContainText("globex");
    await expect(page.getByText("Invalid UUID")).toHaveCount(0);

    const resolved = await adminApi.query<{ items: Found[] }>("admin.keys.resolve", {
      ref: value,
      tenant: "globex",
    });
    expect(resolved.items.map((k) => k.id)).toEqual([ids.globex]);

    // A value nobody used says so, instead of "Invalid UUID".
    await page.goto(`/admin/keys/never-sent-${unique()}`);
    await expect(page.getByRole("alert").filter({ hasText: "No idempotency key" })).toContainText(
      "No idempotency key has the id or the value",
    );
  });
});
