// Each finding kind's details, as the reconciliation job and the payment paths record them, read
// as one sentence with its amounts in their currency.
import { describe, expect, it } from "vitest";
import { describeFinding } from "./finding-text";

describe("describeFinding", () => {
  it("says what each kind found, with amounts in their currency", () => {
    expect(describeFinding("DUPLICATE_CHARGE", { amountCents: 1234, currency: "EUR" })).toBe(
      "The order was charged twice: a second charge of €12.34.",
    );
    expect(
      describeFinding("CHARGE_WITHOUT_ORDER", {
        reference: "0b7f3c1e-9d2a-4e55-8f00-123456789abc",
        amountCents: 500,
        currency: "USD",
        orderStatus: null,
      }),
    ).toBe("$5.00 was charged, for order 0b7f3c1e, which does not exist.");
    expect(
      describeFinding("CHARGE_WITHOUT_ORDER", {
        reference: "x",
        amountCents: 500,
        currency: "EUR",
        orderStatus: "PAYMENT_FAILED",
      }),
    ).toBe("€5.00 was charged, but its order says the payment failed.");
    expect(
      describeFinding("AMOUNT_MISMATCH", {
        orderTotalCents: 2400,
        chargedCents: 1000,
        orderCurrency: "EUR",
        chargeCurrency: "EUR",
        refusedBy: "webhook",
      }),
    ).toBe(
      "Charged €10.00 for an order of €24.00. The payment webhook refused it, so the order was not marked paid.",
    );
    expect(
      describeFinding("PAID_ORDER_WITHOUT_CHARGE", {
        totalCents: 999,
        currency: "EUR",
        recordedChargeId: "ch_1",
      }),
    ).toBe(
      "The order (€9.99) is marked paid, but the provider has no successful charge for it (it recorded ch_1).",
    );
    expect(
      describeFinding("SHARED_INTENT", {
        tenantId: "acme",
        checkoutKey: "k-1",
        orderIds: ["a", "b"],
      }),
    ).toBe("2 orders for one checkout: tenant acme, key k-1.");
  });

  it("does not guess a currency a finding did not record", () => {
    expect(describeFinding("DUPLICATE_CHARGE", { amountCents: 1234 })).toBe(
      "The order was charged twice: a second charge of 12.34 (currency not recorded).",
    );
  });

  it("shows an unknown kind's details as they were recorded", () => {
    expect(describeFinding("SOMETHING_NEW", { a: 1 })).toBe('{"a":1}');
  });
});
