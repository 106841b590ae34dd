// Issue 11: the order page's confirmation follows the payment. "This page updates by itself" is
// true only while the payment is pending; once the worker has charged the order, the banner says
// the payment was received and the page stops promising updates.
import { cartWith, expect, expectPaid, placedOrderId, signIn, test } from "./fixtures";

test("the confirmation banner stops saying the page updates once the order is paid", async ({
  page,
  api,
}) => {
  await signIn(page, "acme");
  await cartWith(page, "Canvas tote");
  await page.getByRole("button", { name: "Place order" }).click();
  const orderId = await placedOrderId(page);

  const banner = page.getByRole("status").filter({ hasText: "Order placed." });
  await expect(banner).toBeVisible();
  await expectPaid(api, orderId);
  // The page polls while pending, so it reaches "Paid" by itself (no reload).
  await expect(page.getByRole("main").getByText("Paid", { exact: true })).toBeVisible();
  await expect(banner).toContainText("Payment received.");
  await expect(banner).not.toContainText("updates by itself");
});
