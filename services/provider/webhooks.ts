// Delivers each event to its shop's webhook (the shop that made the charge: shops.ts) until it
// answers 2xx, signed with that shop's secret as Stripe signs
// (header `simpay-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`), and now
// and then delivers one twice, as real providers do (at least once). A batch goes out a few at a
// time and is recorded with one statement per outcome; its rows stay locked (SKIP LOCKED for a
// second provider process) until they are marked, so a crash means a redelivery, never a loss.
import { createHmac } from "node:crypto";
import type pg from "pg";
import type { Shop } from "./shops";

export const SIGNATURE_HEADER = "simpay-signature";

/**
 * Webhook deliveries in flight at once: a slow merchant endpoint costs a batch (20 events) four
 * round trips of waiting instead of twenty, and the merchant sees at most 5 requests from us.
 */
const CONCURRENCY = 5;
const BATCH_SIZE = 20;
/** A merchant that does not answer within 10 s has not taken the event: it is sent again later. */
const DELIVERY_TIMEOUT_MS = 10_000;
/** A refused event is retried from 5 s, doubling up to an hour (real providers try for days). */
const RETRY_BASE_MS = 5_000;
const RETRY_MAX_MS = 3_600_000;

interface WebhookOptions {
  /** The shops with a webhook; another shop's events wait in the books. */
  shops: readonly Shop[];
  /** Share of delivered events sent a second time (at-least-once delivery, always exercised). */
  duplicateRate: number;
  random?: () => number;
  log?: (line: string) => void;
}

export function sign(secret: string, rawBody: string, timestampSeconds: number): string {
  const t = String(Math.floor(timestampSeconds));
  return `t=${t},v1=${createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex")}`;
}

interface PendingEvent {
  id: string;
  shopId: string;
  type: string;
  payload: unknown;
  attempts: number;
}

async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

export function createWebhookSender(pool: pg.Pool, options: WebhookOptions) {
  const random = options.random ?? Math.random;
  const webhooks = new Map(
    options.shops.flatMap((s) => (s.webhook ? [[s.id, s.webhook] as const] : [])),
  );
  const shopIds = [...webhooks.keys()];
  const send = (event: PendingEvent) => deliver(event, webhooks.get(event.shopId)!);
  return {
    /** One batch of due events; returns how many were sent (the loop runs again at once if any). */
    async runOnce(): Promise<{ attempted: number; delivered: number }> {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const due = await dueEvents(client, shopIds);
        const answers = await mapBounded(due, CONCURRENCY, async (event) => ({
          event,
          why: await send(event),
        }));
        const delivered = await recordAnswers(client, answers, random, options.log);
        await client.query("COMMIT");
        // At least once, as real providers: now and then an event arrives a second time.
        const twice = answers
          .filter((a) => a.why === null && random() < options.duplicateRate)
          .map((a) => a.event);
        await mapBounded(twice, CONCURRENCY, send);
        return { attempted: answers.length, delivered };
      } catch (error) {
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.release();
      }
    },
  };
}

/**
 * The next batch of due events of the shops with a webhook, locked until this transaction ends
 * (SKIP LOCKED: a second provider process takes the next ones instead).
 */
async function dueEvents(client: pg.PoolClient, shopIds: string[]): Promise<PendingEvent[]> {
  const { rows } = await client.query<PendingEvent>(
    `SELECT e.id, c.shop_id AS "shopId", e.type, e.payload, e.attempts
     FROM events e JOIN charges c ON c.id = e.charge_id
     WHERE e.delivered_at IS NULL AND e.next_attempt_at <= now() AND c.shop_id = ANY($2::text[])
     ORDER BY e.next_attempt_at LIMIT $1 FOR UPDATE OF e SKIP LOCKED`,
    [BATCH_SIZE, shopIds],
  );
  return rows;
}

/** null when the shop took it (2xx); otherwise why not. */
async function deliver(event: PendingEvent, webhook: Shop["webhook"] & {}): Promise<string | null> {
  const raw = JSON.stringify({ id: event.id, type: event.type, data: event.payload });
  const headers = {
    "content-type": "application/json",
    [SIGNATURE_HEADER]: sign(webhook.secret, raw, Date.now() / 1000),
  };
  try {
    const res = await fetch(webhook.url, {
      method: "POST",
      headers,
      body: raw,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await res.arrayBuffer();
    return res.ok ? null : `the webhook answered ${res.status}`;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Records a batch's answers, one statement for the delivered and one for the refused (each
 * retried after a jittered backoff); returns how many were delivered.
 */
async function recordAnswers(
  client: pg.PoolClient,
  answers: readonly { event: PendingEvent; why: string | null }[],
  random: () => number,
  log: ((line: string) => void) | undefined,
): Promise<number> {
  const delivered = answers.filter((a) => a.why === null).map((a) => a.event.id);
  const refused = answers.filter((a) => a.why !== null);
  if (delivered.length > 0) {
    await client.query(
      `UPDATE events SET delivered_at = now(), attempts = attempts + 1, last_error = NULL WHERE id = ANY($1::text[])`,
      [delivered],
    );
  }
  if (refused.length > 0) {
    const waits = refused.map((r) => retryDelaySeconds(r.event.attempts, random));
    await client.query(
      `UPDATE events AS e SET attempts = e.attempts + 1, last_error = r.why, next_attempt_at = now() + make_interval(secs => r.wait)
       FROM unnest($1::text[], $2::text[], $3::float8[]) AS r(id, why, wait) WHERE e.id = r.id`,
      [refused.map((r) => r.event.id), refused.map((r) => r.why), waits],
    );
    log?.(`[provider] ${refused.length} webhook(s) refused, retried later: ${refused[0]!.why}`);
  }
  return delivered.length;
}

/** Doubling from RETRY_BASE_MS up to RETRY_MAX_MS, jittered down by up to half. */
function retryDelaySeconds(attempts: number, random: () => number): number {
  return (Math.min(RETRY_BASE_MS * 2 ** attempts, RETRY_MAX_MS) * (0.5 + random() / 2)) / 1000;
}
