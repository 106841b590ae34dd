// What went wrong at checkout, in plain words, with what to do next. One table, so the page and the
// tests agree on the wording.
import type { IdempotencyInfo } from "@once/idempotency/client";
import { isReason, Reason } from "@/shared/reasons";

export interface CheckoutProblem {
  title: string;
  detail: string;
  /** Keep the pending intent (same key next time): the server may have done the work, or none. */
  keepIntent: boolean;
  /** The person has to sign in again. */
  signIn?: boolean;
}

const CHECKOUT_MESSAGES = {
  out_of_stock: {
    title: "Some items are out of stock",
    detail:
      "We do not have as many as you asked for. Lower the quantity or remove the item, then place the order again. Nothing was ordered or charged.",
  },
  product_not_found: {
    title: "A product in your cart is no longer sold",
    detail: "Remove it from your cart, then place the order again. Nothing was ordered or charged.",
  },
  store_unavailable: {
    title: "The shop cannot take orders right now",
    detail:
      "Our order system is briefly unavailable, so your order was not placed and nothing was charged. Your cart is kept: try again in a minute.",
  },
  network: {
    title: "We could not reach the shop",
    detail:
      "Check your connection and press Place order again. If the order did go through, you will see it rather than a second one: it cannot be placed twice.",
  },
  request_in_progress: {
    title: "Your order is still being processed",
    detail:
      "Wait a moment and press Place order again: you will get this same order, never a second one.",
  },
  idempotency_key_reused: {
    title: "Your cart changed while the order was being sent",
    detail: "Check your cart and place the order again.",
  },
  unauthorized: {
    title: "You are not signed in",
    detail: "Sign in, then place the order again. Your cart is kept.",
  },
  too_many_keys: {
    title: "Too many orders in a short time",
    detail: "Wait a minute, then place the order again. Your cart is kept.",
  },
  other: {
    title: "Something went wrong",
    detail: "Your order was not confirmed. Your cart is kept: try again in a moment.",
  },
} as const;
type Kind = keyof typeof CHECKOUT_MESSAGES;

interface ErrorLike {
  message?: unknown;
  data?: { httpStatus?: unknown; reason?: unknown } | null;
}

export function describeCheckoutProblem(
  error: unknown,
  info?: IdempotencyInfo,
): CheckoutProblem & { serverMessage?: string; replayed: boolean } {
  const e = (error ?? {}) as ErrorLike;
  const status = typeof e.data?.httpStatus === "number" ? e.data.httpStatus : undefined;
  // The server's reasons come from the table it shares with the browser (src/shared/reasons.ts).
  const reason: Reason | undefined = isReason(e.data?.reason) ? e.data.reason : undefined;
  const serverMessage =
    typeof e.message === "string" && status !== undefined && status < 500 ? e.message : undefined;
  const replayed = info?.replayed ?? false;
  type Extra = Partial<CheckoutProblem & { serverMessage: string | undefined }>;
  const pick = (kind: Kind, keepIntent: boolean, extra: Extra = {}) =>
    Object.assign({ ...CHECKOUT_MESSAGES[kind], keepIntent, serverMessage, replayed }, extra);

  if (status === undefined) return pick("network", true, { serverMessage: undefined });
  if (reason === Reason.OUT_OF_STOCK || status === 412) return pick("out_of_stock", false);
  if (reason === Reason.PRODUCT_NOT_FOUND) return pick("product_not_found", false);
  if (reason === Reason.STORE_UNAVAILABLE || status === 503) return pick("store_unavailable", true);
  if (reason === Reason.IN_PROGRESS) return pick("request_in_progress", true);
  if (reason === Reason.KEY_REUSED || status === 422) return pick("idempotency_key_reused", false);
  if (status === 401) return pick("unauthorized", true, { signIn: true });
  if (status === 429) return pick("too_many_keys", true);
  return pick("other", status >= 500);
}
