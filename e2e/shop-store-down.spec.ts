// Issues 10 and 11: while the shop cannot reach its database every query fails (5xx). The pages
// must say exactly that: not "product no longer sold", not "sign in" (nothing is gone, nobody was
// signed out), and come back by themselves, without a reload, once the database is back.
// PostgreSQL is stopped for real through the test server's control port.
import { cartWith, db, expect, signIn, test } from "./fixtures";

const NOTICE = "The shop cannot reach its database right now.";

test("with the database down the pages say so and claim nothing else, then recover by themselves", async ({
  page,
  request,
}) => {
  await signIn(page, "acme");
  await cartWith(page, "Sticker pack");
  const nav = page.getByRole("navigation", { name: "Main" });
  const cart = page.getByRole("table", { name: "Cart" });
  const notice = page.getByRole("alert").filter({ hasText: NOTICE });

  await db.stop(request);
  try {
    await page.reload(); // every query of the page now meets the outage
    await expect(notice).toBeVisible();
    await expect(notice).toContainText("Orders cannot be placed until then.");
    await expect(cart.getByRole("row")).toHaveCount(3); // header, the kept line, the total
    await expect(page.getByText("Product no longer sold")).toHaveCount(0);
    await expect(page.getByRole("link", { name: /Sign in/ })).toHaveCount(0);

    await nav.getByRole("link", { name: "Orders" }).click();
    await expect(notice).toContainText("Your orders cannot be shown until then.");
    await expect(page.getByRole("link", { name: /Sign in/ })).toHaveCount(0);

    await nav.getByRole("link", { name: "Catalog" }).click();
    await expect(notice).toContainText("The catalog cannot be shown until then.");

    await nav.getByRole("link", { name: /^Cart/ }).click();
    await expect(notice).toBeVisible();
  } finally {
    await db.start(request);
  }

  // No reload: the failed queries keep asking and the page comes back on its own.
  await expect(page.getByRole("button", { name: "Place order" })).toBeEnabled();
  await expect(cart.getByRole("rowheader", { name: "Sticker pack" })).toBeVisible();
  await expect(notice).toHaveCount(0);
  await expect(nav).toContainText("Signed in as Acme buyer");
});
