// Issue 7: the admin dashboard. The browser shows what the operator sees; the truth is read back
// through the API (new order ids, the key's state) or, for a request still running on "another
// instance", written straight into the database.
import { randomUUID } from "node:crypto";
import type { APIRequestContext } from "@playwright/test";
import { ACCOUNTS, Api, expect, signIn, test as base, type ApiProduct } from "./fixtures";
import { withDb } from "./admin-db";
import { BASE_URL } from "./ports";

/**
 * A globex checkout key PROCESSING on another instance, its lease ending `leaseEndsIn` from now
 * (a PostgreSQL interval), written straight into the app's database: its id.
 */
function insertGlobexCheckout(
  request: APIRequestContext,
  key: string,
  leaseEndsIn: string,
): Promise<string> {
  return withDb(request, async (client) => {
    const inserted = await client.query<{ id: string }>(
      `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
       VALUES ('globex', $1, 'checkout.placeOrder', repeat('0', 64), 'PROCESSING', gen_random_uuid(), now() + $2::interval, now() + interval '1 day')
       RETURNING "id"::text AS "id"`,
      [key, leaseEndsIn],
    );
    return inserted.rows[0]!.id;
  });
}

interface PlaceOrderAnswer {
  status: number;
  headers: Record<string, string>;
  body: { result?: { data: { order: { id: string } } }; error?: { data: { reason?: string } } };
}

// Orders here are globex's: acme's order list belongs to the shop and checkout specs.
const test = base.extend<{ globexApi: Api }>({
  globexApi: async ({ request }, use) => use(new Api(request, ACCOUNTS.globex.token)),
});

let stickers: ApiProduct | undefined;

/** checkout.placeOrder as a plain HTTP client (globex's token), one Sticker pack. */
async function placeOrder(
  api: Api,
  key: string,
  headers: Record<string, string> = {},
): Promise<PlaceOrderAnswer> {
  stickers ??= (await api.products()).find((p) => p.name === "Sticker pack");
  expect(stickers, "the seed has a Sticker pack").toBeDefined();
  return (await api.mutate(
    "checkout.placeOrder",
    { items: [{ productId: stickers!.id, quantity: 1 }] },
    { "idempotency-key": key, ...headers },
  )) as PlaceOrderAnswer;
}

interface KeyRow {
  id: string;
  key: string;
  status: string;
  leaseState: string;
}
async function keyRow(adminApi: Api, key: string): Promise<KeyRow | undefined> {
  const page = await adminApi.query<{ items: KeyRow[] }>("admin.keys.list", {
    tenant: "globex",
    limit: 200,
  });
  return page.items.find((k) => k.key === key);
}

test.describe("admin dashboard", () => {
  test("the admin sees a key appear after a checkout", async ({ page, globexApi: api }) => {
    await signIn(page, "admin", "/admin");
    await expect(page.getByRole("heading", { name: "Idempotency keys" })).toBeVisible();
    await page.getByRole("textbox", { name: "Tenant", exact: true }).fill("globex");
    const key = `e2e-appear-${randomUUID()}`;
    await expect(page.getByRole("link", { name: key, exact: true })).toHaveCount(0);

    expect((await placeOrder(api, key)).status).toBe(200);

    // No reload: the table refetches while open.
    const row = page
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: key, exact: true }) });
    await expect(row).toBeVisible();
    await expect(row).toContainText("COMPLETED");
    await expect(row).toContainText("checkout.placeOrder");
  });

  test("filters to a stuck lease left by a request stalled past its lease", async ({
    page,
    globexApi: api,
    adminApi,
  }) => {
    await signIn(page, "admin", "/admin");
    await page.getByLabel("Stuck leases only").check();
    const key = `e2e-stuck-${randomUUID()}`;
    // The test server's lease is 3 s; this request pauses 8 s inside its transaction.
    const stalled = placeOrder(api, key, { "x-demo-delay-ms": "8000" });

    const row = page
      .getByRole("row")
      .filter({ has: page.getByRole("link", { name: key, exact: true }) });
    await expect(row).toBeVisible({ timeout: 7_000 });
    await expect(row).toContainText("PROCESSING");
    await expect(row).toContainText(/expired \d+ s ago \(stuck\)/);
    // The stuck filter shows only PROCESSING keys with an expired lease.
    await expect(
      page.getByRole("table", { name: "Idempotency keys" }).getByText("COMPLETED", { exact: true }),
    ).toHaveCount(0);

    // The late request still holds its token (nobody took over), so it completes; then it leaves
    // the stuck list by itself.
    expect((await stalled).status).toBe(200);
    await expect(row).toHaveCount(0);
    expect(await keyRow(adminApi, key)).toMatchObject({ status: "COMPLETED", leaseState: "none" });
  });

  test("busts a completed key with a reason, shows the audit entry, and the next request runs anew about the same order", async ({
    page,
    globexApi: api,
    adminApi,
  }) => {
    const key = `e2e-bust-${randomUUID()}`;
    const first = await placeOrder(api, key);
    expect(first.status).toBe(200);
    const firstOrder = first.body.result!.data.order.id;
    const replay = await placeOrder(api, key);
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(replay.body.result!.data.order.id).toBe(firstOrder);

    await signIn(page, "admin", "/admin");
    await page.getByRole("textbox", { name: "Tenant", exact: true }).fill("globex");
    await page.getByRole("link", { name: key, exact: true }).click();
    await expect(page.getByRole("heading", { name: `Key ${key}` })).toBeVisible();
    await expect(page.getByLabel("Stored body")).toContainText(firstOrder);

    const reason = "Customer's bank reversed the charge; let the client place it again";
    await page.getByLabel("Reason").fill(reason);
    await page.getByRole("button", { name: "Bust key" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Key busted" })).toBeVisible();
    const audit = page.getByRole("table", { name: "Audit trail of this key" });
    await expect(audit.getByRole("row").filter({ hasText: reason })).toContainText(
      "admin@example.com",
    );
    await expect(audit).toContainText("key.bust");

    // The truth, through the API: the key is gone, and the next request with it runs the handler
    // again (no replay) and answers afresh about the same effect: one order per intent.
    expect(await keyRow(adminApi, key)).toBeUndefined();
    const again = await placeOrder(api, key);
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
    expect(again.body.result!.data.order.id).toBe(firstOrder);
  });

  test("is refused when busting a PROCESSING key whose lease is live", async ({
    page,
    request,
    adminApi,
  }) => {
    // A request still running on another instance: its lease ten minutes long (the test server's
    // own lease is only 3 s).
    const key = `e2e-live-${randomUUID()}`;
    const id = await insertGlobexCheckout(request, key, "10 minutes");
    try {
      await signIn(page, "admin", "/admin");
      await page.goto(`/admin/keys/${id}`);
      await expect(page.getByLabel("Key detail")).toContainText("live");
      await page.getByLabel("Reason").fill("trying to bust a running request");
      await page.getByRole("button", { name: "Bust key" }).click();
      await expect(
        page.getByRole("alert").filter({ hasText: /Not allowed|Refused/ }),
      ).toContainText("Refused");
      await expect(
        page.getByRole("alert").filter({ hasText: /Not allowed|Refused/ }),
      ).toContainText("key_lease_live");

      // Still there, untouched, and nothing audited.
      const detail = await adminApi.query<{
        key: { status: string; leaseState: string } | null;
        audit: unknown[];
      }>("admin.keys.byId", { id });
      expect(detail.key).toMatchObject({ status: "PROCESSING", leaseState: "live" });
      expect(detail.audit).toEqual([]);
    } finally {
      await withDb(request, (client) =>
        client.query(`DELETE FROM "IdempotencyKey" WHERE "scope" = 'globex' AND "key" = $1`, [key]),
      );
    }
  });

  test("releases a stuck lease by hand with a reason; it is audited and the next request runs anew", async ({
    page,
    request,
    globexApi: api,
    adminApi,
  }) => {
    // A request that died on another instance holding its lease: lease expired a minute ago,
    // nothing committed.
    const key = `e2e-release-${randomUUID()}`;
    const id = await insertGlobexCheckout(request, key, "-1 minute");

    await signIn(page, "admin", "/admin");
    await page.getByLabel("Stuck leases only").check();
    await page.getByRole("link", { name: key, exact: true }).click();
    await expect(page.getByLabel("Key detail")).toContainText("expired");
    const reason = "Instance b7 was killed mid-checkout; nothing committed";
    await page.getByLabel("Reason").fill(reason);
    await page.getByRole("button", { name: "Release lease" }).click();
    await expect(page.getByRole("status").filter({ hasText: "Lease released" })).toBeVisible();
    const audit = page.getByRole("table", { name: "Audit trail of this key" });
    await expect(audit.getByRole("row").filter({ hasText: reason })).toContainText("key.release");

    // The truth, through the API: the key is gone and the same key places an order, not a replay.
    const detail = await adminApi.query<{
      key: unknown;
      audit: { action: string; reason: string }[];
    }>("admin.keys.byId", { id });
    expect(detail.key).toBeNull();
    expect(detail.audit).toMatchObject([{ action: "key.release", reason }]);
    const again = await placeOrder(api, key);
    expect(again.status).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
  });

  test("a tenant or a signed-out visitor opening /admin sees 'not allowed' and no data", async ({
    page,
    api,
    anonymousApi,
  }) => {
    await page.goto("/admin");
    await expect(page.getByRole("alert").filter({ hasText: /Not allowed|Refused/ })).toContainText(
      "Not allowed",
    );
    await expect(page.getByRole("table")).toHaveCount(0);

    await signIn(page, "acme");
    await page.goto("/admin");
    await expect(page.getByRole("alert").filter({ hasText: /Not allowed|Refused/ })).toContainText(
      "Not allowed",
    );
    await expect(page.getByRole("alert").filter({ hasText: /Not allowed|Refused/ })).toContainText(
      "Acme buyer",
    );
    await expect(page.getByRole("table")).toHaveCount(0);
    await expect(page.getByRole("heading", { name: "Counters" })).toHaveCount(0);

    // And the API refuses it too.
    await expect(api.query("admin.keys.list", {})).rejects.toMatchObject({ status: 403 });
    await expect(anonymousApi.query("admin.stats")).rejects.toMatchObject({ status: 401 });
  });

  test("GET /api/metrics: Prometheus text for the admin, by bearer or by the operator's session cookie", async ({
    page,
    request,
  }) => {
    expect((await request.get(`${BASE_URL}/api/metrics`)).status()).toBe(401);
    expect(
      (
        await request.get(`${BASE_URL}/api/metrics`, {
          headers: { authorization: "Bearer acme_demo_token" },
        })
      ).status(),
    ).toBe(403);
    const res = await request.get(`${BASE_URL}/api/metrics`, {
      headers: { authorization: "Bearer admin_demo_token" },
    });
    expect(res.status()).toBe(200);
    const body = await res.text();
    expect(body).toContain("# TYPE once_idempotency_events_total counter");
    expect(body).toMatch(
      /once_idempotency_events_total\{tenant="globex",procedure="checkout\.placeOrder",event="executed"\} [1-9]/,
    );
    expect(body).toMatch(/^once_idempotency_stuck_leases \d+$/m);

    // The operator's browser: the session cookie is enough; a shopper's cookie is not.
    await signIn(page, "admin", "/admin");
    const operator = await page.request.get(`${BASE_URL}/api/metrics`);
    expect(operator.status()).toBe(200);
    expect(await operator.text()).toContain("# TYPE once_idempotency_events_total counter");
    await signIn(page, "globex");
    expect((await page.request.get(`${BASE_URL}/api/metrics`)).status()).toBe(403);
  });
});
