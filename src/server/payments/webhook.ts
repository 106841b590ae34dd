// POST /api/webhooks/payments: the provider's report of a charge. Redelivery is normal (providers
// deliver at least once), so the handling goes through the engine's plain wrapper, scoped to the
// provider and keyed by the event id: the first delivery moves the order, every redelivery gets
// the first answer back and changes nothing.
import { z } from "zod";
import type { Engine } from "../engine";
import { IdempotencyError, withIdempotency } from "@once/idempotency";
import { jsonPayloadTooLarge, readBoundedBody, WEBHOOK_BODY_LIMIT_BYTES } from "../http/body-limit";
import { WEBHOOK_OPERATION, WEBHOOK_SCOPE } from "./config";
import { applyPaymentOutcome } from "./order-payment";
import { EventType } from "./provider";
import { SIGNATURE_HEADER, verifySignature } from "./webhook-signature";
import { Reason } from "@/shared/reasons";
import { plainError } from "../http/plain-error";
import { text } from "@/shared/text";

export const providerEventBody = z.object({
  id: text().regex(/^evt_[0-9a-f]{1,64}$/),
  type: z.enum([EventType.SUCCEEDED, EventType.FAILED]),
  data: z.object({ chargeId: text(), reference: text(), amountCents: z.number().int(), currency: text(), status: text() }),
});
export type ProviderEventBody = z.infer<typeof providerEventBody>;

export interface WebhookAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
  retryAfterSeconds?: number;
}

/** The process's engine: the webhook's keys live in it like any request's, and the order changes in its transaction. */
export interface WebhookDeps {
  engine: Engine;
}

/**
 * Handles an event whose signature the route has checked: the provider's HMAC over the exact bytes
 * is what makes the body the provider's word (a forged or altered body never gets here), so the
 * charge it reports is taken as it stands, without asking the provider again.
 */
export async function handleProviderWebhook({ engine }: WebhookDeps, rawBody: unknown): Promise<WebhookAnswer> {
  const parsed = providerEventBody.safeParse(rawBody);
  if (!parsed.success) return { status: 400, body: { error: "invalid_event" }, replayed: false };
  const event = parsed.data;
  const charge = { id: event.data.chargeId, reference: event.data.reference };

  try {
    const result = await withIdempotency(
      engine,
      { scope: WEBHOOK_SCOPE, key: event.id, operation: WEBHOOK_OPERATION, request: { id: event.id, type: event.type, chargeId: charge.id } },
      async (tx) => {
        const outcome = event.type === EventType.SUCCEEDED ? "PAID" : "PAYMENT_FAILED";
        const change = await applyPaymentOutcome(tx, charge.reference, outcome, charge.id);
        return { received: true, eventId: event.id, orderId: charge.reference, orderStatus: change.status, changed: change.changed };
      },
    );
    return { status: result.status, body: result.body, replayed: result.replayed };
  } catch (error) {
    // 409 (the same event is being handled right now), 503 (key store down): the provider retries.
    if (error instanceof IdempotencyError) {
      return { status: error.httpStatus, body: { error: error.reason }, replayed: false, retryAfterSeconds: error.retryAfterSeconds };
    }
    throw error;
  }
}

export interface WebhookDoorOptions {
  /** The shared signing secret: the validated PAYMENTS_WEBHOOK_SECRET. */
  secret: string;
  /** Our clock, in unix seconds, for the signature's tolerance. */
  nowSeconds?: () => number;
}

/**
 * The route: read the body up to its limit (413 past it, unread), check the provider's signature
 * over the exact bytes (400 with a reason if missing, wrong or stale: nothing is recorded, no key
 * taken), parse, handle, answer with the engine's headers.
 */
export async function webhookResponse(deps: WebhookDeps, request: Request, options: WebhookDoorOptions): Promise<Response> {
  const raw = await readBoundedBody(request, WEBHOOK_BODY_LIMIT_BYTES);
  if (!raw.ok) return jsonPayloadTooLarge(raw.limitBytes);
  const { secret } = options;
  const nowSeconds = options.nowSeconds?.() ?? Date.now() / 1000;
  const signed = verifySignature(request.headers.get(SIGNATURE_HEADER), raw.bytes, secret, { nowSeconds });
  if (!signed.ok) return plainError(400, signed.reason, signed.message);
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(raw.bytes));
  } catch {
    return plainError(400, Reason.INVALID_JSON, "The webhook's body is not valid JSON");
  }
  const answer = await handleProviderWebhook(deps, body);
  const headers = new Headers();
  if (answer.replayed) headers.set("Idempotent-Replayed", "true");
  if (answer.retryAfterSeconds !== undefined) headers.set("Retry-After", String(answer.retryAfterSeconds));
  return Response.json(answer.body, { status: answer.status, headers });
}
