// POST /api/webhooks/payments: the provider's report of a charge. Redelivery is normal (providers
// deliver at least once), so the handling goes through the engine's plain wrapper, scoped to the
// provider and keyed by the event id: the first delivery moves the order, every redelivery gets
// the first answer back and changes nothing.
import { z } from "zod";
import type { Db } from "../db/client";
import { engineFor } from "../engine";
import { IdempotencyError, withIdempotency } from "@once/idempotency";
import { WEBHOOK_OPERATION, WEBHOOK_SCOPE } from "./config";
import { applyPaymentOutcome } from "./order-payment";
import { EventType } from "./provider";

export const providerEventBody = z.object({
  id: z.string().regex(/^evt_[0-9a-f]{1,64}$/),
  type: z.enum([EventType.SUCCEEDED, EventType.FAILED]),
  data: z.object({ chargeId: z.string(), reference: z.string(), amountCents: z.number().int(), currency: z.string(), status: z.string() }),
});
export type ProviderEventBody = z.infer<typeof providerEventBody>;

export interface WebhookAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
  retryAfterSeconds?: number;
}

export async function handleProviderWebhook(db: Db, rawBody: unknown): Promise<WebhookAnswer> {
  const parsed = providerEventBody.safeParse(rawBody);
  if (!parsed.success) return { status: 400, body: { error: "invalid_event" }, replayed: false };
  // Trust nothing in the body but the event id: look the event up in the provider's own books (a
  // real integration fetches it from the provider's API or checks its signature). An unknown id is
  // refused before the engine, so a forged id never occupies a key.
  const event = await db.providerEvent.findUnique({ where: { id: parsed.data.id } });
  const charge = event ? await db.providerCharge.findUnique({ where: { id: event.chargeId } }) : null;
  if (!event || !charge) return { status: 404, body: { error: "unknown_event" }, replayed: false };

  try {
    const result = await withIdempotency(
      engineFor(db),
      { scope: WEBHOOK_SCOPE, key: event.id, operation: WEBHOOK_OPERATION, request: { id: event.id, type: event.type, chargeId: event.chargeId } },
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

/** The route's body: parse, handle, answer with the engine's headers. */
export async function webhookResponse(db: Db, request: Request): Promise<Response> {
  let body: unknown;
  try {
    body = await request.json();
  } catch {
    return Response.json({ error: "invalid_json" }, { status: 400 });
  }
  const answer = await handleProviderWebhook(db, body);
  const headers = new Headers();
  if (answer.replayed) headers.set("Idempotent-Replayed", "true");
  if (answer.retryAfterSeconds !== undefined) headers.set("Retry-After", String(answer.retryAfterSeconds));
  return Response.json(answer.body, { status: answer.status, headers });
}
