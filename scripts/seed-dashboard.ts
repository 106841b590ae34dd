// The dashboard's history at scale, beside scripts/seed-keys.ts's keys: counters per minute for
// the last 24 h (a normal day's, per scope × procedure that really exists: seed-data.ts) and an
// audit log of busts and releases of seeded keys. A bust or release deletes its key, so the seed
// does too: the keys it audits are gone, as the dashboard would show them after an operator's
// action, and no key in place has an audit entry that contradicts its state. Used by `npm run
// seed:keys` and bench:admin. Seeds go beside real data, never over it: a minute that already has
// a count keeps it, and the audit entries name (and remove) only keys of the seed's own run.
import { CounterEvent } from "@once/idempotency/reasons";
import type pg from "pg";
import { SEED_PAIRS } from "./seed-data";

/**
 * A normal day, per tenant and procedure and minute: what the engine counts when nothing is wrong.
 * Most requests execute, a few retries are answered from the store, a double-click now and then
 * meets its key in flight; a key reused for another request, a handler's error releasing its key,
 * a lease taken over and an operator's bust are rare. Nothing of an incident (store errors, a busy
 * store, the live-key cap, fenced writes): a seed shows only what a quiet day would have measured.
 */
const NORMAL_DAY: { event: CounterEvent; everyMinutes: number; upTo: number }[] = [
  { event: CounterEvent.EXECUTED, everyMinutes: 1, upTo: 40 },
  { event: CounterEvent.REPLAYED, everyMinutes: 1, upTo: 5 },
  { event: CounterEvent.CONFLICTS, everyMinutes: 20, upTo: 2 },
  { event: CounterEvent.MISMATCHES, everyMinutes: 180, upTo: 1 },
  { event: CounterEvent.RELEASED, everyMinutes: 45, upTo: 1 },
  { event: CounterEvent.TAKEOVERS, everyMinutes: 240, upTo: 1 },
  { event: CounterEvent.BUSTED, everyMinutes: 600, upTo: 1 },
];

/**
 * The most the table can hold in a day, for bench:admin's scale test (not for a dashboard anyone
 * reads): every event the engine counted before store_busy existed, every minute; 9 scope ×
 * procedure pairs × 10 events × 1 440 minutes = 129 600 rows.
 */
export const FULLEST_DAY = [
  CounterEvent.EXECUTED,
  CounterEvent.REPLAYED,
  CounterEvent.CONFLICTS,
  CounterEvent.MISMATCHES,
  CounterEvent.RELEASED,
  CounterEvent.TAKEOVERS,
  CounterEvent.STORE_ERRORS,
  CounterEvent.TOO_MANY_KEYS,
  CounterEvent.BUSTED,
  CounterEvent.FENCED,
].map((event) => ({ event, everyMinutes: 1, upTo: 40 }));

/**
 * Every pair of SEED_PAIRS × 1 440 minutes of `day` (a normal one unless told), where no count is
 * yet.
 */
export async function seedCounterMinutes(
  client: pg.Client | pg.Pool,
  day = NORMAL_DAY,
): Promise<number> {
  // The totals too, as the engine's flush writes both (the chart's picker offers every tenant
  // counted): what this seed inserted is added to them, never written over what was counted.
  const r = await client.query<{ n: string }>(
    `WITH "inserted" AS (
       INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
       SELECT t, p, d."event", date_trunc('minute', now()) - make_interval(mins => m), 1 + (m * 7 + length(t)) % d."upTo"
       FROM unnest($1::text[], $2::text[]) AS pair(t, p),
            unnest($3::text[], $4::int[], $5::int[]) AS d("event", "every", "upTo"), generate_series(0, 1439) AS m
       WHERE m % d."every" = 0
       ON CONFLICT ("scope", "procedure", "event", "minute") DO NOTHING
       RETURNING "scope", "procedure", "event", "count"),
     "totals" AS (
       INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count", "updatedAt")
       SELECT "scope", "procedure", "event", sum("count"), now() FROM "inserted" GROUP BY 1, 2, 3
       ON CONFLICT ("scope", "procedure", "event") DO UPDATE SET "count" = "IdempotencyCounter"."count" + EXCLUDED."count", "updatedAt" = now()
       RETURNING 1)
     SELECT (SELECT count(*) FROM "inserted") AS "n", (SELECT count(*) FROM "totals") AS "totals"`,
    [
      SEED_PAIRS.map((pair) => pair.scope),
      SEED_PAIRS.map((pair) => pair.procedure),
      day.map((d) => d.event),
      day.map((d) => d.everyMinutes),
      day.map((d) => d.upTo),
    ],
  );
  await client.query(`ANALYZE "IdempotencyCounterMinute"`);
  return Number(r.rows[0]!.n);
}

/**
 * Up to `count` of the newest finished or stuck keys of seed run `run`, busted (finished) or
 * released (stuck) by three operators: each key deleted and its audit entry written in one
 * statement, from the DELETE's own RETURNING, as the dashboard's own actions do. A live lease is
 * never touched (an operator cannot release it). Returns how many.
 */
export async function seedAudit(
  client: pg.Client | pg.Pool,
  run: string,
  count = 20_000,
): Promise<number> {
  const r = await client.query(
    `WITH "chosen" AS MATERIALIZED (
       SELECT "id", row_number() OVER (ORDER BY "createdAt" DESC) AS n FROM "IdempotencyKey"
       WHERE "key" LIKE 'seed-' || $2 || '-%' AND ("status" <> 'PROCESSING' OR "leaseExpiresAt" < now())
       ORDER BY "createdAt" DESC LIMIT $1
     ), "removed" AS (
       DELETE FROM "IdempotencyKey" AS k USING "chosen" AS c WHERE k."id" = c."id"
       RETURNING k.*, c.n
     )
     INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "targetScope", "targetKey", "reason", "details", "createdAt")
     SELECT (ARRAY['admin@example.com', 'night@example.com', 'oncall@example.com'])[1 + n % 3],
            CASE WHEN k."status" = 'PROCESSING' THEN 'key.release' ELSE 'key.bust' END,
            'IdempotencyKey', k."id"::text, k."scope", k."key", 'seeded for the dashboard bench',
            -- What the removed row held, as the dashboard's own bust and release record it.
            jsonb_build_object('tenant', k."scope", 'key', k."key", 'procedure', k."procedure", 'status', k."status",
              'leaseState', CASE WHEN k."status" = 'PROCESSING' THEN 'expired' END, 'fingerprint', k."fingerprint",
              'attempts', k."attempts", 'responseStatus', k."responseStatus", 'responseBody', k."responseBody",
              'createdAt', k."createdAt", 'completedAt', k."completedAt", 'leaseExpiresAt', k."leaseExpiresAt",
              'expiresAt', k."expiresAt"),
            -- After the key finished (a bust) or its lease ended (a release, which only a stuck
            -- lease allows), and not in the future: its timeline reads reserved, then removed.
            LEAST(now(), COALESCE(k."completedAt", k."leaseExpiresAt") + make_interval(secs => 1 + n % 50))
     FROM "removed" AS k`,
    [count, run],
  );
  await client.query(`ANALYZE "AuditEntry"`);
  return r.rowCount ?? 0;
}
