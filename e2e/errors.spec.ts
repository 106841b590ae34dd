// The errors page that error answers link to: every reason has its entry, and a link from a real
// answer lands on it.
import { expect, test } from "@playwright/test";
import { REASON_INFO } from "../src/shared/reasons";

test("an error answer's Link leads to its explanation on the errors page", async ({
  page,
  request,
}) => {
  const res = await request.get("/api/trpc/orders.list");
  expect(res.status()).toBe(401);
  const link = res.headers()["link"];
  expect(link).toBe('</docs/errors#unauthorized>; rel="describedby"');
  const target = /<([^>]+)>/.exec(link!)![1]!;
  await page.goto(target);
  await expect(page.getByRole("heading", { name: "Errors" })).toBeVisible();
  for (const reason of Object.keys(REASON_INFO))
    await expect(page.locator(`[id="${reason}"]`)).toBeVisible();
  await expect(page.locator("#unauthorized")).toContainText("Sign in");
});
