// Issue 3: a person signs in as acme, fills a cart with two products, checks out and finds the
// order on the orders page. The truth is read back through the API with acme's bearer token.
import { addToCart, expect, expectPaid, placedOrderId, signIn, test } from "./fixtures";

test.describe("the shop", () => {
  test("sign in as acme, add two products, check out, see the order on the orders page", async ({
    page,
    api,
  }) => {
    const ledger = await api.orderLedger();
    await signIn(page, "acme");

    await addToCart(page, "Enamel mug", "Organic T-shirt");
    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Cart (2)" })
      .click();
    const cart = page.getByRole("table", { name: "Cart" });
    await expect(cart.getByRole("rowheader", { name: "Enamel mug" })).toBeVisible();
    await expect(cart.getByRole("rowheader", { name: "Organic T-shirt" })).toBeVisible();
    await expect(cart.getByRole("row", { name: /Order total/ })).toContainText("€43.50");

    await page.getByRole("button", { name: "Place order" }).click();
    const orderId = await placedOrderId(page);
    await expect(page.getByText("Order placed.")).toBeVisible();

    await page
      .getByRole("navigation", { name: "Main" })
      .getByRole("link", { name: "Orders" })
      .click();
    await expect(page.getByRole("heading", { name: "Your orders" })).toBeVisible();
    await expect(page.getByRole("link", { name: `Order ${orderId.slice(0, 8)}` })).toBeVisible();

    const created = await ledger.created();
    expect(created.map((o) => o.id)).toEqual([orderId]);
    expect(created[0]!.items.map((i) => [i.name, i.quantity])).toEqual([
      ["Enamel mug", 1],
      ["Organic T-shirt", 1],
    ]);
    expect(created[0]!.totalCents).toBe(4350);
    await expectPaid(api, orderId);
    await page.getByRole("link", { name: `Order ${orderId.slice(0, 8)}` }).click();
    await expect(page.getByRole("heading", { name: `Order ${orderId.slice(0, 8)}` })).toBeVisible();
    await expect(page.getByRole("main").getByText("Paid", { exact: true })).toBeVisible();
  });

  test("a signed-out visitor keeps the cart and is asked to sign in to check out", async ({
    page,
  }) => {
    await addToCart(page, "Sticker pack");
    await page.goto("/cart");
    await page.getByRole("link", { name: "Sign in to place your order" }).click();
    await page.getByRole("button", { name: "Sign in as Acme buyer" }).click();
    await expect(page).toHaveURL(/\/cart$/);
    await expect(
      page.getByRole("table", { name: "Cart" }).getByRole("rowheader", { name: "Sticker pack" }),
    ).toBeVisible();
    await expect(page.getByRole("button", { name: "Place order" })).toBeEnabled();
  });

  test("the orders page asks a signed-out visitor to sign in", async ({ page }) => {
    await page.goto("/orders");
    await expect(page.getByRole("link", { name: "Sign in as a shop account" })).toBeVisible();
  });
});
