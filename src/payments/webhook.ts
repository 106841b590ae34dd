// POST /api/webhooks/payments: the provider's report of a charge. Redelivery is normal (providers
// deliver at least once), so the handling is a route protected by the engine's HTTP layer
// (@once/idempotency/http), scoped to the provider and keyed by the event id: the first delivery
// moves the order, every redelivery gets the first answer back (its bytes) and changes nothing.
import { z } from "zod";
import type { Engine, Tx } from "./db";
import { idempotent } from "@once/idempotency/http";
import {
  BODY_READ_DEADLINE_MS,
  jsonPayloadTooLarge,
  jsonRequestTimeout,
  readBodyWithin,
  type TimedBody,
  WEBHOOK_BODY_LIMIT_BYTES,
} from "../http/body-limit";
import { WEBHOOK_OPERATION, WEBHOOK_SCOPE } from "./config";
import type { FindingLogger } from "./books/finding-log";
import { applyPaymentOutcome } from "./order-payment";
import { EventType } from "./provider";
import { SIGNATURE_HEADER, verifySignature } from "./webhook-signature";
import { Reason } from "@/shared/reasons";
import { plainError } from "../http/plain-error";
import { text } from "@/shared/text";

/** Where every reason is explained: refusals link to its anchor (problem details' `type`). */
const ERRORS_PAGE = "/docs/errors";

export const providerEventBody = z.object({
  id: text().regex(/^evt_[0-9a-f]{1,64}$/),
  type: z.enum([EventType.SUCCEEDED, EventType.FAILED]),
  data: z.object({
    chargeId: text(),
    reference: text(),
    amountCents: z.number().int(),
    currency: text(),
    status: text(),
  }),
});
export type ProviderEventBody = z.infer<typeof providerEventBody>;

export interface WebhookAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
  retryAfterSeconds?: number;
}

/**
 * The process's engine: the webhook's keys live in it like any request's, and the order changes in
 * its transaction. `logger`: where a refused charge's finding is said (the process's logger).
 */
export interface WebhookDeps {
  engine: Engine;
  logger?: FindingLogger;
}

/** The route's path: part of every delivery's fingerprint, in process or over HTTP. */
export const WEBHOOK_PATH = "/api/webhooks/payments";

/**
 * A provider event handed over in process, past the signature check: for the tests and the
 * payments bench that feed events directly (the provider service delivers over HTTP). It is the
 * same route as over HTTP, so an event's key means the same request either way.
 */
export async function handleProviderWebhook(
  deps: WebhookDeps,
  rawBody: unknown,
): Promise<WebhookAnswer> {
  const request = new Request(`http://localhost${WEBHOOK_PATH}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(rawBody),
  });
  const res = await eventResponse(deps, request, rawBody);
  const retryAfter = res.headers.get("retry-after");
  return {
    status: res.status,
    body: await res.json(),
    replayed: res.headers.get("idempotent-replayed") === "true",
    ...(retryAfter === null ? {} : { retryAfterSeconds: Number(retryAfter) }),
  };
}

/**
 * A signed event's answer. The route has checked the signature: the provider's HMAC over the exact
 * bytes is what makes the body the provider's word (a forged or altered body never gets here), so
 * the charge it reports is taken as it stands, without asking the provider again; it pays its
 * order only if it took the order's total in the order's currency. The key is the
 * event id; 409 (the same event handled right now) and 503 (key store down) are problem details
 * with Retry-After, and the provider retries.
 */
async function eventResponse(
  { engine, logger }: WebhookDeps,
  request: Request,
  rawBody: unknown,
): Promise<Response> {
  const parsed = providerEventBody.safeParse(rawBody);
  if (!parsed.success)
    return plainError(
      400,
      Reason.INVALID_EVENT,
      "The body is not a provider event this shop knows",
    );
  const event = parsed.data;
  const route = idempotent<Tx>(async (_request, { tx }) => applyEvent(tx, event, logger), {
    engine,
    scope: () => WEBHOOK_SCOPE,
    key: () => event.id,
    // The event id is the delivery's identity; the signature already proves the body. A
    // redelivery whose other fields changed (providers count deliveries) is the same event.
    fingerprint: "key",
    operation: WEBHOOK_OPERATION,
    docs: ERRORS_PAGE,
  });
  return route(request);
}

/** The event's charge applied to its order, in the key's transaction. */
async function applyEvent(
  tx: Tx,
  event: ProviderEventBody,
  logger: FindingLogger | undefined,
): Promise<Response> {
  const charge = {
    id: event.data.chargeId,
    reference: event.data.reference,
    amountCents: event.data.amountCents,
    currency: event.data.currency,
  };
  const outcome = event.type === EventType.SUCCEEDED ? "PAID" : "PAYMENT_FAILED";
  // The charge moves its order only if it took the order's total in its currency: a charge
  // anyone made with the order's reference and another amount is a finding, not a payment.
  const change = await applyPaymentOutcome(tx, charge.reference, outcome, charge, logger);
  return Response.json({
    received: true,
    eventId: event.id,
    orderId: charge.reference,
    orderStatus: change.status,
    changed: change.changed,
    ...(change.mismatch ? { refused: "amount_mismatch" } : {}),
  });
}

export interface WebhookDoorOptions {
  /** The shared signing secret: the validated PAYMENTS_WEBHOOK_SECRET. */
  secret: string;
  /** Our clock, in unix seconds, for the signature's tolerance. */
  nowSeconds?: () => number;
}

/**
 * The route: read the body up to its limit (413 past it, unread) and within the API's body
 * deadline (408), check the provider's signature over the exact bytes (400 with a reason if
 * missing, wrong or stale: nothing is recorded, no key taken), parse, handle, answer with the
 * engine's headers. `read`: the body as the front door read it (src/server/edge/node-body.ts).
 */
export async function webhookResponse(
  deps: WebhookDeps,
  request: Request,
  options: WebhookDoorOptions,
  read?: TimedBody,
): Promise<Response> {
  const raw = await readBodyWithin(request, WEBHOOK_BODY_LIMIT_BYTES, BODY_READ_DEADLINE_MS, read);
  if (!raw.ok)
    return "limitBytes" in raw
      ? jsonPayloadTooLarge(raw.limitBytes)
      : jsonRequestTimeout(raw.timedOutMs);
  const { secret } = options;
  const nowSeconds = options.nowSeconds?.() ?? Date.now() / 1000;
  const signed = verifySignature(request.headers.get(SIGNATURE_HEADER), raw.bytes, secret, {
    nowSeconds,
  });
  if (!signed.ok) return plainError(400, signed.reason, signed.message);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(raw.bytes));
  } catch {
    return plainError(400, Reason.INVALID_JSON, "The webhook's body is not valid JSON");
  }
  // The layer fingerprints the bytes that were signed: the request still holds them when the
  // front door read them; otherwise they are read again from a request of their own.
  return eventResponse(
    deps,
    read
      ? request
      : new Request(request.url, {
          method: "POST",
          headers: request.headers,
          body: raw.bytes as BodyInit,
        }),
    body,
  );
}
