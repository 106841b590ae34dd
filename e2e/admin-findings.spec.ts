// The reconciliation findings table on a 1 300 px screen: one finding of each kind, its details
// in words with the amounts in their currency, and every Resolve button in view without
// scrolling sideways. The findings go straight into the table, as the reconciliation job writes
// them.
import { expect, signIn, test } from "./fixtures";
import { unique, withDb } from "./admin-db";

const charge = () => `ch_${unique()}${unique()}${unique()}`;

test.use({ viewport: { width: 1300, height: 900 } });

test("findings read as sentences and the table fits a 1 300 px page", async ({ page, request }) => {
  const run = unique();
  const order = "0b7f3c1e-9d2a-4e55-8f00-123456789abc";
  const findings: [string, string[], object, string][] = [
    [
      "DUPLICATE_CHARGE",
      [charge(), charge()],
      { amountCents: 1234, currency: "EUR" },
      "The order was charged twice: a second charge of €12.34.",
    ],
    [
      "CHARGE_WITHOUT_ORDER",
      [charge()],
      { reference: order, amountCents: 500, currency: "EUR", orderStatus: null },
      "€5.00 was charged, for order 0b7f3c1e, which does not exist.",
    ],
    [
      "AMOUNT_MISMATCH",
      [charge()],
      {
        orderTotalCents: 2400,
        chargedCents: 1000,
        orderCurrency: "EUR",
        chargeCurrency: "EUR",
        refusedBy: "worker",
      },
      "Charged €10.00 for an order of €24.00. The payment worker refused it",
    ],
    [
      "PAID_ORDER_WITHOUT_CHARGE",
      [],
      { totalCents: 999, currency: "EUR", recordedChargeId: null },
      "The order (€9.99) is marked paid, but the provider has no successful charge for it.",
    ],
    [
      "SHARED_INTENT",
      [charge(), charge()],
      { tenantId: "acme", checkoutKey: `key-${run}`, orderIds: [order, order] },
      `2 orders for one checkout: tenant acme, key key-${run}.`,
    ],
  ];
  await withDb(request, async (c) => {
    for (const [kind, chargeIds, details] of findings)
      await c.query(
        `INSERT INTO "ReconciliationFinding" ("kind", "dedupeKey", "orderId", "chargeIds", "details")
         VALUES ($1::"FindingKind", $2, $3, $4, $5)`,
        [kind, `${kind}:${run}`, order, chargeIds, details],
      );
  });

  await signIn(page, "admin", "/admin/outbox");
  const table = page.getByRole("table", { name: "Reconciliation findings" });
  for (const [, , , sentence] of findings)
    await expect(table.getByRole("cell", { name: sentence })).toBeVisible();
  await expect(table).not.toContainText('{"');

  // Nothing wider than the page: neither the table's own box nor the page scrolls sideways, and
  // every Resolve button sits inside the 1 300 px.
  const overflow = await table.evaluate((el) =>
    [el, el.parentElement!, document.documentElement].map(
      (box) => box.scrollWidth - box.clientWidth,
    ),
  );
  expect(overflow).toEqual([0, 0, 0]);
  const buttons = table.getByRole("button", { name: "Resolve" });
  expect(await buttons.count()).toBeGreaterThanOrEqual(findings.length);
  for (const button of await buttons.all()) {
    const box = (await button.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(1300);
  }
});
