// The provider's side of webhooks: deliver each recorded event to the merchant's webhook until it
// answers 2xx, and now and then deliver one twice, as real providers do (at-least-once delivery).
// Batches of events go out a few at a time and are recorded with one statement per outcome.
import type { Db } from "../db/client";
import type { Tx } from "../db/client";
import { backoffMs } from "./backoff";
import { mapBounded } from "./bounded";
import { DUPLICATE_EVENT_RATE, EVENT_RETRY_BACKOFF } from "./config";
import type { ProviderEventBody } from "./webhook";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature";

/** Posts one event to the merchant; returns the HTTP status it answered. */
export type EventSink = (body: ProviderEventBody) => Promise<number>;

interface PendingEvent {
  id: string;
  type: ProviderEventBody["type"];
  payload: ProviderEventBody["data"];
  attempts: number;
}

/**
 * Webhook deliveries in flight at once, per dispatcher: a slow merchant endpoint costs a batch
 * (20 events) four round trips of waiting instead of twenty, and the merchant sees at most 5
 * concurrent requests from us, as real providers cap theirs.
 */
export const EVENT_DELIVERY_CONCURRENCY = 5;

export interface EventDispatchResult {
  attempted: number;
  delivered: number;
  duplicated: number;
  failed: number;
}

export interface EventDispatcherOptions {
  deliver: EventSink;
  batchSize?: number;
  /** Deliveries in flight at once. */
  concurrency?: number;
  duplicateRate?: number;
  random?: () => number;
  log?: (message: string) => void;
}

export function createEventDispatcher(db: Db, options: EventDispatcherOptions) {
  const random = options.random ?? Math.random;
  const duplicateRate = options.duplicateRate ?? DUPLICATE_EVENT_RATE;
  const batchSize = options.batchSize ?? 20;
  const concurrency = options.concurrency ?? EVENT_DELIVERY_CONCURRENCY;

  /** null when the merchant took it (2xx); otherwise why not. */
  async function send(body: ProviderEventBody): Promise<string | null> {
    try {
      const status = await options.deliver(body);
      return status >= 200 && status < 300 ? null : `the webhook answered ${status}`;
    } catch (error) {
      options.log?.(`[events] ${body.id}: ${(error as Error).message}`);
      return (error as Error).message;
    }
  }

  /** Delivered events in one statement. */
  async function markDelivered(tx: Tx, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await tx.$executeRaw`
      UPDATE "ProviderEvent" SET "deliveredAt" = now(), "attempts" = "attempts" + 1, "lastError" = NULL WHERE "id" = ANY(${ids}::text[])`;
  }

  /** Refused events in one statement, each due again after its own, growing wait (as real providers do, for days). */
  async function markRefused(tx: Tx, refused: readonly { event: PendingEvent; why: string }[]): Promise<void> {
    if (refused.length === 0) return;
    const waitsSeconds = refused.map((r) => backoffMs(r.event.attempts + 1, EVENT_RETRY_BACKOFF, random) / 1000);
    await tx.$executeRaw`
      UPDATE "ProviderEvent" AS e
      SET "attempts" = e."attempts" + 1, "lastError" = r."why", "nextAttemptAt" = now() + make_interval(secs => r."wait")
      FROM unnest(${refused.map((r) => r.event.id)}::text[], ${refused.map((r) => r.why)}::text[], ${waitsSeconds}::float8[]) AS r("id", "why", "wait")
      WHERE e."id" = r."id"`;
  }

  return {
    /**
     * One round over undelivered events: a batch is sent a few at a time, then recorded in (at
     * most) two statements. The rows stay locked (SKIP LOCKED for other dispatchers) until they
     * are marked, so a crash only means a redelivery: at least once, never lost.
     */
    async runOnce(): Promise<EventDispatchResult> {
      return db.$transaction(
        async (tx) => {
          const events = await tx.$queryRaw<PendingEvent[]>`
            SELECT "id", "type", "payload", "attempts" FROM "ProviderEvent"
            WHERE "deliveredAt" IS NULL AND "nextAttemptAt" <= now()
            ORDER BY "nextAttemptAt" LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
          const bodyOf = (event: PendingEvent): ProviderEventBody => ({ id: event.id, type: event.type, data: event.payload });
          const answers = await mapBounded(events, concurrency, async (event) => ({ event, why: await send(bodyOf(event)) }));
          const delivered = answers.filter((a) => a.why === null).map((a) => a.event);
          const refused = answers.flatMap((a) => (a.why === null ? [] : [{ event: a.event, why: a.why }]));
          await markDelivered(
            tx,
            delivered.map((e) => e.id),
          );
          await markRefused(tx, refused);
          // At-least-once, as real providers: now and then an event arrives a second time.
          const twice = delivered.filter(() => random() < duplicateRate);
          await mapBounded(twice, concurrency, (event) => send(bodyOf(event)));
          return { attempted: events.length, delivered: delivered.length, duplicated: twice.length, failed: refused.length };
        },
        { timeout: 60_000, maxWait: 10_000 },
      );
    },
  };
}
export type EventDispatcher = ReturnType<typeof createEventDispatcher>;

/** Delivery over HTTP, signed with `secret`, for a provider (or worker process) outside the app's process. */
export function httpSink(url: string, secret: string): EventSink {
  return async (body) => {
    const raw = JSON.stringify(body);
    const headers = { "content-type": "application/json", [SIGNATURE_HEADER]: signatureHeader(secret, raw, Date.now() / 1000) };
    const res = await fetch(url, { method: "POST", headers, body: raw, signal: AbortSignal.timeout(10_000) });
    return res.status;
  };
}
