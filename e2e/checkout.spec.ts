// Issue 6: whatever the network or the person's fingers do, one intent is one order and one
// charge. Every test reads the truth back through the API (acme's bearer token): exactly one new
// order for the intent, and, once the outbox worker ran, one charge (chargeId set, status PAID).
import type { Page } from "@playwright/test";
import {
  addToCart,
  cartWith,
  clickBurst,
  db,
  expect,
  expectPaid,
  openCart,
  placedOrderId,
  recordCheckouts,
  signIn,
  test,
  type Api,
} from "./fixtures";

const replayedNotice = "Your order was already placed: this is the replayed answer.";

/**
 * The order the checkout landed on, as a replay: the cart hands the order page the marker that
 * the answer was a replay, and the page says so.
 */
async function replayedOrderId(page: Page): Promise<string> {
  const orderId = await placedOrderId(page);
  expect(new URL(page.url()).searchParams.get("placed")).toBe("replayed");
  await expect(page.getByText(replayedNotice)).toBeVisible();
  return orderId;
}

/** Exactly one order was placed since `ledger` was taken; it is `orderId` with these products. */
async function expectExactlyOneOrder(
  api: Api,
  ledger: Awaited<ReturnType<Api["orderLedger"]>>,
  orderId: string,
  products: string[],
) {
  const created = await ledger.created();
  expect(created.map((o) => o.id)).toEqual([orderId]);
  expect(created[0]!.items.map((i) => i.name).sort()).toEqual([...products].sort());
  await expectPaid(api, orderId);
}

test.describe("checkout: one intent, one order", () => {
  test.beforeEach(async ({ page }) => {
    await signIn(page, "acme");
  });

  for (const clicks of [2, 5]) {
    test(`${clicks} clicks landing before the button disables place one order`, async ({
      page,
      api,
    }) => {
      const products = clicks === 2 ? ["Canvas tote"] : ["Dot-grid notebook", "Wool cap"];
      await cartWith(page, ...products);
      const sent = recordCheckouts(page);
      const ledger = await api.orderLedger();

      await clickBurst(page.getByRole("button", { name: "Place order" }), clicks);

      const orderId = await placedOrderId(page);
      await expect(page.getByText("Order placed.")).toBeVisible();
      expect(sent.keys.length).toBeGreaterThanOrEqual(1);
      expect(new Set(sent.keys).size).toBe(1);
      await expectExactlyOneOrder(api, ledger, orderId, products);
    });
  }

  test("a lost response: the server placed the order, the link retries and shows the replay", async ({
    page,
    api,
  }) => {
    await cartWith(page, "Steel bottle");
    const sent = recordCheckouts(page);
    const ledger = await api.orderLedger();
    let dropped = 0;
    await page.route("**/api/trpc/checkout.placeOrder**", async (route) => {
      if (dropped > 0) return route.continue();
      dropped += 1;
      await route.fetch(); // the server executes the request and answers...
      await route.abort("connectionreset"); // ...and the browser never hears it
    });

    await page.getByRole("button", { name: "Place order" }).click();

    const orderId = await replayedOrderId(page);
    expect(dropped).toBe(1);
    expect(sent.keys).toHaveLength(2);
    expect(new Set(sent.keys).size).toBe(1);
    await expectExactlyOneOrder(api, ledger, orderId, ["Steel bottle"]);
  });

  test("the panel's 'drop the next response' shows the retry and the replay", async ({
    page,
    api,
  }) => {
    await cartWith(page, "Striped socks");
    const ledger = await api.orderLedger();
    await page.getByRole("checkbox", { name: /Drop the next response/ }).check();

    await page.getByRole("button", { name: "Place order" }).click();

    const orderId = await replayedOrderId(page);
    await expectExactlyOneOrder(api, ledger, orderId, ["Striped socks"]);
  });

  test("a reload right after submitting finds the pending order instead of placing another", async ({
    page,
    api,
  }) => {
    await cartWith(page, "Brass pen");
    const ledger = await api.orderLedger();
    // The server takes 1.5 s over this order, so the reload lands while it is still running.
    await page.getByLabel("Slow the server's processing").selectOption({ label: "1.5 seconds" });
    const request = page.waitForRequest("**/api/trpc/checkout.placeOrder**");
    await page.getByRole("button", { name: "Place order" }).click();
    await request;
    await page.reload();

    const orderId = await placedOrderId(page);
    await expect(page.getByText(/Order placed\.|already placed/).first()).toBeVisible();
    await expectExactlyOneOrder(api, ledger, orderId, ["Brass pen"]);
  });

  test("the back button after the confirmation does not order again", async ({ page, api }) => {
    await cartWith(page, "Enamel mug", "Sticker pack");
    const ledger = await api.orderLedger();
    await page.getByRole("button", { name: "Place order" }).click();
    const orderId = await placedOrderId(page);
    await expect(page.getByText("Order placed.")).toBeVisible();

    await page.goBack();
    await expect(page).toHaveURL(/\/cart$/);
    await expect(page.getByText("Your cart is empty.")).toBeVisible();
    await expect(page.getByRole("button", { name: "Place order" })).toHaveCount(0);
    await page.goForward();
    await expect(page.getByRole("heading", { name: `Order ${orderId.slice(0, 8)}` })).toBeVisible();
    await expectExactlyOneOrder(api, ledger, orderId, ["Enamel mug", "Sticker pack"]);
  });

  test("two tabs submitting the same cart at once place one order", async ({
    page,
    context,
    api,
  }) => {
    await addToCart(page, "Organic T-shirt", "Steel bottle");
    const other = await context.newPage();
    await openCart(page);
    await openCart(other);
    for (const tab of [page, other]) {
      await tab.getByLabel("Slow the server's processing").selectOption({ label: "1.5 seconds" });
    }
    const ledger = await api.orderLedger();

    await Promise.all(
      [page, other].map((tab) => clickBurst(tab.getByRole("button", { name: "Place order" }), 1)),
    );

    const [a, b] = await Promise.all([placedOrderId(page), placedOrderId(other)]);
    expect(b).toBe(a);
    await expect(page.getByText(/Order placed\.|already placed/).first()).toBeVisible();
    await expect(other.getByText(/Order placed\.|already placed/).first()).toBeVisible();
    // Both tabs show their confirmation: one placed the order, the other got the replay.
    const replayedIn = await Promise.all(
      [page, other].map((tab) => tab.getByText(replayedNotice).count()),
    );
    expect(replayedIn.reduce((sum, n) => sum + n, 0)).toBe(1);
    await expectExactlyOneOrder(api, ledger, a, ["Organic T-shirt", "Steel bottle"]);
  });

  test("a slow server: the second submit waits on the server (Prefer: wait) and gets the replay, no 409", async ({
    page,
    api,
  }) => {
    await cartWith(page, "Canvas tote", "Striped socks");
    const sent = recordCheckouts(page);
    const ledger = await api.orderLedger();
    await page.getByLabel("Slow the server's processing").selectOption({ label: "1.5 seconds" });
    await page.getByRole("checkbox", { name: "Send the next order twice at once" }).check();

    await page.getByRole("button", { name: "Place order" }).click();

    const orderId = await placedOrderId(page);
    await expect(
      page.getByText("the other request was answered with this same order (replayed)"),
    ).toBeVisible();
    expect(sent.answers.map((a) => a.status)).not.toContain(409);
    expect(sent.answers.filter((a) => a.status === 200 && a.replayed)).toEqual([
      { status: 200, replayed: true, preferenceApplied: "wait=10" },
    ]);
    expect(sent.answers.filter((a) => a.status === 200 && !a.replayed)).toHaveLength(1);
    expect(new Set(sent.keys).size).toBe(1);
    await expectExactlyOneOrder(api, ledger, orderId, ["Canvas tote", "Striped socks"]);
  });

  test("a changed cart after an order is a new intent: a second, different order", async ({
    page,
    api,
  }) => {
    const sent = recordCheckouts(page);
    const ledger = await api.orderLedger();
    await cartWith(page, "Dot-grid notebook");
    await page.getByRole("button", { name: "Place order" }).click();
    const first = await placedOrderId(page);
    await expect(page.getByText("Order placed.")).toBeVisible();

    await cartWith(page, "Dot-grid notebook", "Sticker pack");
    await page.getByRole("button", { name: "Place order" }).click();
    await expect(page).not.toHaveURL(new RegExp(first));
    const second = await placedOrderId(page);
    await expect(page.getByText("Order placed.")).toBeVisible();

    expect(second).not.toBe(first);
    expect(new Set(sent.keys).size).toBe(2);
    const created = await ledger.created();
    expect(created.map((o) => o.id).sort()).toEqual([first, second].sort());
    expect((await api.order(second)).items.map((i) => i.name)).toEqual([
      "Dot-grid notebook",
      "Sticker pack",
    ]);
    await expectPaid(api, first);
    await expectPaid(api, second);
  });

  test("store unavailable: a clear message and no order, then success once it is back", async ({
    page,
    api,
    request,
  }) => {
    await cartWith(page, "Wool cap");
    const ledger = await api.orderLedger();

    await db.stop(request);
    try {
      await page.getByRole("button", { name: "Place order" }).click();
      const problem = page
        .getByRole("alert")
        .filter({ hasText: "The shop cannot take orders right now" });
      await expect(problem).toBeVisible({ timeout: 30_000 });
      await expect(problem).toContainText("your order was not placed and nothing was charged");
    } finally {
      await db.start(request);
    }
    expect(await ledger.created()).toEqual([]);

    await page.getByRole("button", { name: "Place order" }).click();
    const orderId = await placedOrderId(page);
    await expect(page.getByText(/Order placed\./)).toBeVisible();
    await expectExactlyOneOrder(api, ledger, orderId, ["Wool cap"]);
  });
});
