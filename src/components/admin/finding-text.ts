// A reconciliation finding in words for the dashboard: each kind records its own details
// (src/payments/reconciliation.ts, charge-mismatch.ts and the outbox worker), and the
// operator reads one short sentence with its amounts in their currency instead of the raw JSON.
import { formatMoney, shortId } from "../format";

type Details = Record<string, unknown>;

/**
 * An amount in its currency. A finding recorded before its kind kept the currency has none:
 * say so rather than guess one.
 */
function money(cents: unknown, currency: unknown): string {
  if (typeof cents !== "number") return "an unknown amount";
  return typeof currency === "string"
    ? formatMoney(cents, currency)
    : `${(cents / 100).toFixed(2)} (currency not recorded)`;
}

const REFUSED_BY: Record<string, string> = {
  webhook: " The payment webhook refused it, so the order was not marked paid.",
  worker: " The payment worker refused it, so the order was not marked paid.",
};

/** Why a charge has no paid order to show for it, by the order's status (null: no such order). */
const ORDERLESS: Record<string, string> = {
  PENDING: "but its order is still awaiting payment long after the charge",
  PAYMENT_FAILED: "but its order says the payment failed",
};

const SENTENCES: Record<string, (d: Details) => string> = {
  DUPLICATE_CHARGE: (d) =>
    `The order was charged twice: a second charge of ${money(d.amountCents, d.currency)}.`,
  CHARGE_WITHOUT_ORDER: (d) => {
    const why =
      ORDERLESS[String(d.orderStatus)] ??
      `for order ${shortId(String(d.reference ?? "?"))}, which does not exist`;
    return `${money(d.amountCents, d.currency)} was charged, ${why}.`;
  },
  AMOUNT_MISMATCH: (d) =>
    `Charged ${money(d.chargedCents, d.chargeCurrency)} for an order of ` +
    `${money(d.orderTotalCents, d.orderCurrency)}.${REFUSED_BY[String(d.refusedBy)] ?? ""}`,
  PAID_ORDER_WITHOUT_CHARGE: (d) =>
    `The order (${money(d.totalCents, d.currency)}) is marked paid, but the provider has no ` +
    `successful charge for it${typeof d.recordedChargeId === "string" ? ` (it recorded ${d.recordedChargeId})` : ""}.`,
  SHARED_INTENT: (d) => {
    const orders = Array.isArray(d.orderIds) ? d.orderIds.length : "Several";
    return `${orders} orders for one checkout: tenant ${String(d.tenantId ?? "?")}, key ${String(d.checkoutKey ?? "?")}.`;
  },
};

/** The finding's details as one sentence; an unknown kind shows what was recorded as it is. */
export function describeFinding(kind: string, details: unknown): string {
  const sentence = SENTENCES[kind];
  const recorded = details && typeof details === "object" ? (details as Details) : {};
  return sentence ? sentence(recorded) : JSON.stringify(details);
}
