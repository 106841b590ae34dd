// The provider's side of webhooks: deliver each recorded event to the merchant's webhook until it
// answers 2xx, and now and then deliver one twice, as real providers do (at-least-once delivery).
import type { Db } from "../db/client";
import { backoffMs } from "./backoff";
import { DUPLICATE_EVENT_RATE, EVENT_RETRY_BACKOFF } from "./config";
import type { ProviderEventBody } from "./webhook";
import { SIGNATURE_HEADER, signatureHeader } from "./webhook-signature";

/** Posts one event to the merchant; returns the HTTP status it answered. */
export type EventSink = (body: ProviderEventBody) => Promise<number>;

export interface EventDispatchResult {
  attempted: number;
  delivered: number;
  duplicated: number;
  failed: number;
}

export interface EventDispatcherOptions {
  deliver: EventSink;
  batchSize?: number;
  duplicateRate?: number;
  random?: () => number;
  log?: (message: string) => void;
}

export function createEventDispatcher(db: Db, options: EventDispatcherOptions) {
  const random = options.random ?? Math.random;
  const duplicateRate = options.duplicateRate ?? DUPLICATE_EVENT_RATE;
  const batchSize = options.batchSize ?? 20;

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

  return {
    /**
     * One round over undelivered events. The rows stay locked (SKIP LOCKED for other dispatchers)
     * until each is marked delivered, so a crash only means a redelivery: at least once, never lost.
     */
    async runOnce(): Promise<EventDispatchResult> {
      return db.$transaction(
        async (tx) => {
          const events = await tx.$queryRaw<{ id: string; type: ProviderEventBody["type"]; payload: ProviderEventBody["data"]; attempts: number }[]>`
            SELECT "id", "type", "payload", "attempts" FROM "ProviderEvent"
            WHERE "deliveredAt" IS NULL AND "nextAttemptAt" <= now()
            ORDER BY "nextAttemptAt" LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`;
          const result: EventDispatchResult = { attempted: events.length, delivered: 0, duplicated: 0, failed: 0 };
          for (const event of events) {
            const body: ProviderEventBody = { id: event.id, type: event.type, data: event.payload };
            const refused = await send(body);
            if (refused) {
              // Try again later, waiting longer each time, as real providers do (for days).
              const waitMs = backoffMs(event.attempts + 1, EVENT_RETRY_BACKOFF, random);
              await tx.$executeRaw`
                UPDATE "ProviderEvent" SET "attempts" = "attempts" + 1, "lastError" = ${refused},
                  "nextAttemptAt" = now() + make_interval(secs => ${waitMs / 1000}::float8)
                WHERE "id" = ${event.id}`;
              result.failed++;
              continue;
            }
            await tx.$executeRaw`
              UPDATE "ProviderEvent" SET "deliveredAt" = now(), "attempts" = "attempts" + 1, "lastError" = NULL WHERE "id" = ${event.id}`;
            result.delivered++;
            if (random() < duplicateRate) {
              await send(body);
              result.duplicated++;
            }
          }
          return result;
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
