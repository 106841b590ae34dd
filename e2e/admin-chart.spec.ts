// Issue 11: every counter in the table, and the counters per minute over the last 24 h as a chart
// per tenant and procedure. Minute rows go straight into IdempotencyCounterMinute (as the engine's
// flush writes them); the chart's totals are checked against the API.
import { expect, signIn, test } from "./fixtures";
import { insertCompletedKey, unique, withDb } from "./admin-db";

test.describe("admin: counters over time", () => {
  test("charts one tenant and procedure per minute for 24 h, and the table shows every counter", async ({
    page,
    request,
    adminApi,
  }) => {
    const tenant = `chart${unique()}`;
    const procedure = "checkout.placeOrder";
    await withDb(request, async (c) => {
      // executed 3 + 9, replayed 4, conflicts 2, store errors 1; one row older than 24 h is left
      // out.
      const rows: [string, number, number][] = [
        ["executed", 0, 3],
        ["executed", 30, 9],
        ["replayed", 30, 4],
        ["conflicts", 90, 2],
        ["store_errors", 600, 1],
        ["executed", 24 * 60 + 10, 50],
      ];
      for (const [event, minutesAgo, count] of rows) {
        await c.query(
          `INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
           VALUES ($1, $2, $3, date_trunc('minute', now()) - make_interval(mins => $4), $5)`,
          [tenant, procedure, event, minutesAgo, count],
        );
      }
      // The running totals the table shows (and the chart's picker lists).
      for (const [event, count] of [
        ["executed", 62],
        ["too_many_keys", 5],
        ["fenced", 1],
      ] as const) {
        await c.query(
          `INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count") VALUES ($1, $2, $3, $4)`,
          [tenant, procedure, event, count],
        );
      }
    });

    await signIn(page, "admin", "/admin");
    const counters = page.getByRole("table", { name: "Counters per tenant and procedure" });
    await expect(counters.getByRole("columnheader", { name: "too many keys" })).toBeVisible();
    await expect(counters.getByRole("columnheader", { name: "fenced" })).toBeVisible();
    await expect(counters.getByRole("columnheader", { name: "bodies omitted" })).toBeVisible();
    const row = counters.getByRole("row").filter({ hasText: tenant });
    await expect(row.getByRole("cell")).toHaveText([
      tenant,
      procedure,
      "62",
      "0",
      "0",
      "0",
      "0",
      "0",
      "0",
      "0",
      "5",
      "0",
      "1",
      "0",
    ]);

    await page.getByLabel("Chart of").selectOption({ label: `${tenant} · ${procedure}` });
    const chart = page.getByRole("img", { name: /Counts per 15 minutes over the last 24 hours/ });
    await expect(chart).toHaveAccessibleName(
      /executed 12, replayed 4, conflicts 2, mismatches 0, store errors 1/,
    );
    // 96 quarter-hours a line, and the axis's "now" inside the chart, not cut off at its edge.
    expect(
      (await chart.locator("polyline[data-event=executed]").getAttribute("points"))!.split(" "),
    ).toHaveLength(96);
    const [svgBox, nowBox] = [
      await chart.boundingBox(),
      await chart.getByText("now", { exact: true }).boundingBox(),
    ];
    expect(nowBox!.x + nowBox!.width).toBeLessThanOrEqual(svgBox!.x + svgBox!.width);
    const totals = page.getByRole("list", { name: "Totals over the last 24 hours" });
    await expect(totals.getByRole("listitem")).toHaveText([
      "executed 12",
      "replayed 4",
      "conflicts 2",
      "mismatches 0",
      "store errors 1",
    ]);

    const api = await adminApi.query<{
      minutes: number;
      series: Record<string, number[]>;
      totals: Record<string, number>;
    }>("admin.counters.series", {
      tenant,
      procedure,
    });
    expect(api.totals).toEqual({
      executed: 12,
      replayed: 4,
      conflicts: 2,
      mismatches: 0,
      store_errors: 1,
    });
    // The 3 went into the current minute; if a minute turned since, it is the one before the last.
    const executed = api.series.executed!;
    const current = executed.lastIndexOf(3);
    expect(executed.length - 1 - current).toBeLessThanOrEqual(1);
    expect(executed[current - 30]).toBe(9);
  });

  test("the dashboard fits a 390 px phone: nothing clipped, wide tables scroll inside themselves", async ({
    page,
    request,
  }) => {
    // The longest key a client may send (255 characters, no space to wrap at), on its own page too.
    const longKey = `long-${"x".repeat(250)}`;
    await withDb(request, async (c) => {
      await insertCompletedKey(c, { scope: "globex", key: longKey });
      // A counted procedure with a long name, so the counters table and the chart are on the page.
      await c.query(
        `INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count") VALUES ($1, 'payments.reconcileAfterProviderOutage', 'executed', 1)`,
        [`phone${unique()}`],
      );
    });
    await page.setViewportSize({ width: 390, height: 844 });
    await signIn(page, "admin", "/admin");
    await expect(
      page.getByRole("table", { name: "Counters per tenant and procedure" }),
    ).toBeVisible();
    await expect(page.getByRole("img", { name: /Counts per 15 minutes/ })).toBeVisible();
    await page.getByLabel("Stuck leases only").check();
    await expect(page.getByRole("region", { name: "Release stuck leases in bulk" })).toBeVisible();
    // The dashboard's own content (the site's top bar is the shop's, outside <main>) stays within
    // 390 px.
    const widths = () =>
      page.getByRole("main").evaluate((m) => ({
        content: Math.max(m.scrollWidth, Math.ceil(m.getBoundingClientRect().right)),
        view: window.innerWidth,
      }));
    expect(await widths()).toEqual({ content: 390, view: 390 });
    const counters = page.getByRole("table", { name: "Counters per tenant and procedure" });
    // The table scrolls sideways inside itself rather than widening the page.
    expect(
      await counters.evaluate(
        (t) => t.scrollWidth > t.clientWidth && getComputedStyle(t).overflowX === "auto",
      ),
    ).toBe(true);
    for (const path of ["/admin/audit", "/admin/outbox", `/admin/keys/${longKey}`]) {
      await page.goto(path);
      await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
      if (path.startsWith("/admin/keys/"))
        await expect(page.getByLabel("Key detail")).toContainText(longKey);
      expect(await widths()).toEqual({ content: 390, view: 390 });
    }
  });
});
