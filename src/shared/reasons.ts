// Every `error.data.reason` the app answers with, in one table shared by the server and the
// browser: the engine's own (from @once/idempotency) and the app's. The status decides the tRPC
// code; the errors page (/docs/errors) is written from `meaning` and `remedy`.
import { REASONS as ENGINE_REASONS, Reason as EngineReason } from "@once/idempotency/reasons";
import { MAX_BATCH_SIZE } from "./batch";

export interface ReasonInfo {
  status: number;
  meaning: string;
  remedy: string;
}

// The doors (sign-in, sign-out, cookie-authenticated posts: src/server/auth, src/http), bounded
// and authenticated inputs (src/http/body-limit.ts, the payment webhook), the shop and the admin.
const APP_REASONS = {
  unauthorized: {
    status: 401,
    meaning: "The request carries no valid credentials.",
    remedy: "Sign in, or send Authorization: Bearer <token> with a token made by `npm run users`.",
  },
  forbidden: {
    status: 403,
    meaning:
      "These credentials are valid but may not do this (a tenant calling an admin procedure, or an admin a tenant's).",
    remedy: "Use an account with the right role.",
  },
  cross_site_request: {
    status: 403,
    meaning:
      "A state change (sign-in, sign-out, a mutation with the session cookie) came from another site's page (Sec-Fetch-Site / Origin).",
    remedy: "Post from this site's own pages; API clients send a bearer token and no cookie.",
  },
  invalid_credentials: {
    status: 401,
    meaning: "Wrong e-mail address or password (the two are not told apart).",
    remedy: "Check both; an operator can set a new password with `npm run users -- set-password`.",
  },
  too_many_attempts: {
    status: 429,
    meaning: "Too many sign-in attempts for this account or from this address within 15 minutes.",
    remedy: "Wait the Retry-After seconds, then try again.",
  },
  password_required: {
    status: 400,
    meaning: "Sign-in without a password: only demo accounts do that, and only in demo mode.",
    remedy: "Send email and password.",
  },
  not_a_demo_account: {
    status: 400,
    meaning: "One-click sign-in (demo mode) opens demo accounts only.",
    remedy: "Pick a demo account, or sign in with a password.",
  },
  unsupported_media_type: {
    status: 415,
    meaning: "Sign-in takes an HTML form only.",
    remedy: "Send application/x-www-form-urlencoded or multipart/form-data.",
  },
  invalid_form: {
    status: 400,
    meaning: "The sign-in form could not be read, or a field is missing or repeated.",
    remedy: "Send one email field (and one password field).",
  },
  invalid_input: {
    status: 400,
    meaning:
      "The input does not match the procedure's schema, or holds text PostgreSQL cannot store (NUL, an unpaired surrogate); nothing was recorded.",
    remedy:
      "Fix the fields named in error.data.zodError and send again (a new key is fine: nothing was kept).",
  },
  invalid_json: {
    status: 400,
    meaning: "The body is not valid JSON.",
    remedy: "Send the input as a JSON document with Content-Type: application/json.",
  },
  bad_request: {
    status: 400,
    meaning: "The request is malformed.",
    remedy: "Check the method, path and query string against the README.",
  },
  batch_too_large: {
    status: 400,
    meaning: `The batch holds more than ${MAX_BATCH_SIZE} calls; none of them ran.`,
    remedy: `Split it into batches of at most ${MAX_BATCH_SIZE} (tRPC's httpBatchLink: maxItems: ${MAX_BATCH_SIZE}).`,
  },
  invalid_cursor: {
    status: 400,
    meaning:
      "The cursor is not one this list handed to you (an order id of your own); nothing was listed.",
    remedy: "Start from the first page (no cursor) and pass on each answer's nextCursor.",
  },
  not_found: {
    status: 404,
    meaning: "There is no procedure at this path.",
    remedy: "Check the procedure's name (catalog.list, checkout.placeOrder, …).",
  },
  internal_error: {
    status: 500,
    meaning: "Something failed on our side; nothing about it is shown to callers.",
    remedy: "Retry with the same Idempotency-Key: at most one effect results.",
  },
  product_not_found: {
    status: 404,
    meaning:
      "A product in the order does not exist. This answer is stored: retries with the same key get it again.",
    remedy: "Reload the catalog, fix the cart, and send it as a new order (new key).",
  },
  out_of_stock: {
    status: 412,
    meaning:
      "There is not enough stock for a product in the order. This answer is stored and replayed.",
    remedy: "Lower the quantity and send it as a new order (new key).",
  },
  mixed_currencies: {
    status: 400,
    meaning: "The products of one order must share a currency.",
    remedy: "Split the order by currency.",
  },
  order_not_found: {
    status: 404,
    meaning: "No order with this id belongs to your account.",
    remedy: "List your orders with orders.list.",
  },
  key_not_found: {
    status: 404,
    meaning: "No idempotency key with this id or value exists (busted, released or reaped).",
    remedy: "Search the dashboard by the key's value.",
  },
  key_lease_live: {
    status: 412,
    meaning:
      "This key's request is still running (its lease is live): removing it could let a retry run twice.",
    remedy: "Wait for the lease to end; a stuck key can be released then.",
  },
  key_not_stuck: {
    status: 412,
    meaning: "This key is finished, not a stuck lease: there is nothing to release.",
    remedy: "Bust it instead, if the next request must run anew.",
  },
  outbox_message_not_found: {
    status: 404,
    meaning: "No outbox message with this id.",
    remedy: "Reload the outbox list.",
  },
  session_not_found: {
    status: 404,
    meaning:
      "No live session with this id: it ended (signed out, revoked, expired) or never existed.",
    remedy: "Reload the sessions list.",
  },
  payload_too_large: {
    status: 413,
    meaning:
      "The request body is over the documented limit (64 KiB); it was not read whole and nothing was recorded.",
    remedy:
      "Send a smaller body: an order has at most 20 lines, a sign-in form three short fields.",
  },
  request_timeout: {
    status: 408,
    meaning:
      "The request body did not arrive within the server's deadline (10 s); nothing was executed.",
    remedy: "Send the whole body at once: an API body is at most 64 KiB.",
  },
  webhook_signature_missing: {
    status: 400,
    meaning: "The webhook carries no provider signature header; nothing was recorded.",
    remedy: "Deliver it through the provider, which signs every event (t=…,v1=…).",
  },
  webhook_signature_invalid: {
    status: 400,
    meaning:
      "The webhook's signature does not match its body and the shared secret; nothing was recorded.",
    remedy: "Check PAYMENTS_WEBHOOK_SECRET on both sides; a forged or altered event is refused.",
  },
  webhook_signature_stale: {
    status: 400,
    meaning:
      "The webhook's signed timestamp is more than 5 minutes from the server's clock; nothing was recorded.",
    remedy: "Redeliver it (the provider signs it anew) and check the clocks.",
  },
  invalid_event: {
    status: 400,
    meaning: "The webhook's body is not a provider event this shop knows.",
    remedy: "Send the provider's event as it was signed.",
  },
  outbox_message_not_dead: {
    status: 412,
    meaning: "Only a dead-lettered outbox message can be retried by hand.",
    remedy: "Wait: the worker is still retrying it.",
  },
} satisfies Record<string, ReasonInfo>;
type AppReasonName = keyof typeof APP_REASONS;

/** The app's reasons by name: each table key in upper case (UNAUTHORIZED: "unauthorized"). */
const AppReason = {
  ...(Object.fromEntries(Object.keys(APP_REASONS).map((r) => [r.toUpperCase(), r])) as {
    [R in AppReasonName as Uppercase<R>]: R;
  }),
  OUTBOX_NOT_FOUND: "outbox_message_not_found",
  OUTBOX_NOT_DEAD: "outbox_message_not_dead",
} as const;

export const Reason = { ...EngineReason, ...AppReason } as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

export const REASON_INFO: Record<Reason, ReasonInfo> = { ...ENGINE_REASONS, ...APP_REASONS };

export function isReason(value: unknown): value is Reason {
  return typeof value === "string" && value in REASON_INFO;
}

/** Where a reason is explained: the app's errors page (the IETF draft's advice). */
export function reasonDocsPath(reason: Reason): string {
  return `/docs/errors#${reason}`;
}

/** The `Link` header's value that points an error answer at its reason's explanation. */
export function describedByLink(reason: Reason): string {
  return `<${reasonDocsPath(reason)}>; rel="describedby"`;
}
