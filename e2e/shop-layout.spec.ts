// Issue 11: the shop works on a phone. Every shop page fits the viewport (no sideways scrolling)
// and the header takes at most two lines with each link on one. playwright.config.ts runs the
// shop specs at 1280 px and again at 390 × 844 (the "phone" project), so this holds at both.
import type { Page } from "@playwright/test";
import { cartWith, expect, placedOrderId, signIn, test } from "./fixtures";

async function expectFitsTheScreen(page: Page, what: string) {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${what}: no sideways scrolling at ${innerWidth} px`).toBeLessThanOrEqual(
    innerWidth,
  );

  const nav = page.getByRole("navigation", { name: "Main" });
  const rows = await nav.evaluate((el) => {
    // Each group (links, account) wraps as a whole: count the distinct lines its items sit on.
    // Items of one line are centred on it (align-items: center), whatever their heights.
    const centres = [...el.querySelectorAll("a, button, span.muted")].map((item) => {
      const box = item.getBoundingClientRect();
      return Math.round((box.top + box.bottom) / 2 / 12);
    });
    return new Set(centres).size;
  });
  expect(rows, `${what}: the header takes at most two lines`).toBeLessThanOrEqual(2);
  for (const link of await nav.getByRole("link").all()) {
    const box = (await link.boundingBox())!;
    expect(box.height, `${what}: "${await link.textContent()}" stays on one line`).toBeLessThan(30);
  }
}

test("catalog, cart, order and orders fit the screen, signed in, with a full cart", async ({
  page,
}) => {
  await signIn(page, "acme");
  await expectFitsTheScreen(page, "catalog");

  await cartWith(page, "Organic T-shirt", "Dot-grid notebook", "Enamel mug");
  await expectFitsTheScreen(page, "cart");

  await page.getByRole("button", { name: "Place order" }).click();
  await placedOrderId(page);
  await expect(page.getByRole("table", { name: "Items" })).toBeVisible();
  await expectFitsTheScreen(page, "order");

  await page
    .getByRole("navigation", { name: "Main" })
    .getByRole("link", { name: "Orders" })
    .click();
  await expect(page.getByRole("table", { name: "Orders" })).toBeVisible();
  await expectFitsTheScreen(page, "orders");
});

test("the sign-in page fits the screen", async ({ page }) => {
  await page.goto("/signin");
  await expect(page.getByRole("heading", { name: "Sign in" })).toBeVisible();
  await expectFitsTheScreen(page, "sign-in");
});
