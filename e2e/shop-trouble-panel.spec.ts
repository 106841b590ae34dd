// Issue 11: the trouble panel's settings behave alike. All three are one-shot: they apply to the
// next order, then switch themselves off (before, "slow" stayed on while the other two reset).
// The way back to the cart is the header's link: a client-side navigation keeps the page's state,
// as a person clicking around does, so a setting that stayed on would show.
import { cartLink, cartWith, expect, placedOrderId, signIn, test } from "./fixtures";

test("every trouble setting applies to one order and then switches itself off", async ({
  page,
  api,
}) => {
  await signIn(page, "acme");
  await cartWith(page, "Striped socks");
  const ledger = await api.orderLedger();
  const panel = page.getByRole("region", { name: "Network trouble (demo)" });
  await expect(panel).toContainText("applies to the next order only");

  const drop = panel.getByRole("checkbox", { name: /Drop the next response/ });
  const twice = panel.getByRole("checkbox", { name: "Send the next order twice at once" });
  const slow = panel.getByLabel("Slow the server's processing");
  await drop.check();
  await twice.check();
  await slow.selectOption({ label: "1.5 seconds" });
  await expect(page.getByText("Network trouble is on for the next order")).toBeVisible();

  await page.getByRole("button", { name: "Place order" }).click();
  const orderId = await placedOrderId(page);
  expect((await ledger.created()).map((o) => o.id)).toEqual([orderId]);

  await cartLink(page).click();
  await expect(page.getByRole("heading", { name: "Your cart" })).toBeVisible();
  await expect(drop).not.toBeChecked();
  await expect(twice).not.toBeChecked();
  await expect(slow).toHaveValue("0");
  // The log of the order just placed is still there: only the settings reset.
  await expect(panel.getByRole("list", { name: "Checkout log" })).toContainText(
    "Asked the server to take 1.5 s",
  );
});
