// Issue 11: the cart belongs to the signed-in account, not to the browser. acme's cart must not
// show up for globex after signing out and in on the same browser, and each account finds its
// own cart again when it comes back.
import { addToCart, cartLink, expect, signIn, signOut, test } from "./fixtures";

test.describe("the cart belongs to the account", () => {
  test("signing out and in as another account shows that account's cart, and each gets its own back", async ({
    page,
  }) => {
    const cart = page.getByRole("table", { name: "Cart" });

    await signIn(page, "acme");
    await addToCart(page, "Enamel mug");
    await signOut(page);
    await expect(cartLink(page)).toHaveText("Cart");

    await signIn(page, "globex");
    await expect(cartLink(page)).toHaveText("Cart");
    await page.goto("/cart");
    await expect(page.getByText("Your cart is empty.")).toBeVisible();
    await addToCart(page, "Wool cap");
    await signOut(page);

    await signIn(page, "acme", "/cart");
    await expect(cart.getByRole("rowheader", { name: "Enamel mug" })).toBeVisible();
    await expect(cart.getByRole("rowheader", { name: "Wool cap" })).toHaveCount(0);
    await expect(cartLink(page)).toHaveText("Cart (1)");

    await signOut(page);
    await signIn(page, "globex", "/cart");
    await expect(cart.getByRole("rowheader", { name: "Wool cap" })).toBeVisible();
    await expect(cart.getByRole("rowheader", { name: "Enamel mug" })).toHaveCount(0);
    await expect(cartLink(page)).toHaveText("Cart (1)");
  });

  test("a visitor's cart goes with them when they sign in, and is not left behind for the next visitor", async ({
    page,
  }) => {
    await addToCart(page, "Sticker pack");
    await signIn(page, "acme", "/cart");
    await expect(
      page.getByRole("table", { name: "Cart" }).getByRole("rowheader", { name: "Sticker pack" }),
    ).toBeVisible();

    await signOut(page);
    await page.goto("/cart");
    await expect(page.getByText("Your cart is empty.")).toBeVisible();
  });
});
