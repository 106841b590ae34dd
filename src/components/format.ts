// Small display helpers shared by the shop pages.

export function formatMoney(cents: number, currency: string): string {
  try {
    return new Intl.NumberFormat("en", { style: "currency", currency }).format(cents / 100);
  } catch {
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

export function formatDateTime(value: string | Date): string {
  const date = typeof value === "string" ? new Date(value) : value;
  return date.toLocaleString("en", { dateStyle: "medium", timeStyle: "medium" });
}

/** The first characters of a UUID, enough to tell orders apart on screen. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

export type OrderStatus = "PENDING" | "PAID" | "PAYMENT_FAILED";

export const ORDER_STATUS_LABEL: Record<
  OrderStatus,
  { text: string; tone: "ok" | "warn" | "bad" }
> = {
  PENDING: { text: "Awaiting payment", tone: "warn" },
  PAID: { text: "Paid", tone: "ok" },
  PAYMENT_FAILED: { text: "Payment failed", tone: "bad" },
};

export function statusLabel(status: string): { text: string; tone: "ok" | "warn" | "bad" } {
  return ORDER_STATUS_LABEL[status as OrderStatus] ?? { text: status, tone: "warn" };
}
