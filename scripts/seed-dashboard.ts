// The dashboard's history at scale, beside scripts/seed-keys.ts's keys: counters per minute for
// the last 24 h (every tenant × procedure × event × minute, the most the table can hold) and an
// audit log of busts and releases naming seeded keys. Used by `npm run seed:keys` and bench:admin.
// Seeds go beside real data, never over it: a minute that already has a count keeps it, and the
// audit entries name only the keys of the seed's own run.
import type pg from "pg";
import { SEED_PROCEDURES, SEED_TENANTS } from "./seed-data";

const EVENTS = ["executed", "replayed", "conflicts", "mismatches", "released", "takeovers", "store_errors", "too_many_keys", "busted", "fenced"];

/** 5 tenants × 3 procedures × 10 events × 1 440 minutes = 216 000 rows, where no count is yet. */
export async function seedCounterMinutes(client: pg.Client | pg.Pool): Promise<number> {
  // The totals too, as the engine's flush writes both (the chart's picker offers every tenant
  // counted): what this seed inserted is added to them, never written over what was counted.
  const r = await client.query<{ n: string }>(
    `WITH "inserted" AS (
       INSERT INTO "IdempotencyCounterMinute" ("scope", "procedure", "event", "minute", "count")
       SELECT t, p, e, date_trunc('minute', now()) - make_interval(mins => m), 1 + (m * 7 + length(e)) % 40
       FROM unnest($1::text[]) AS t, unnest($2::text[]) AS p, unnest($3::text[]) AS e, generate_series(0, 1439) AS m
       ON CONFLICT ("scope", "procedure", "event", "minute") DO NOTHING
       RETURNING "scope", "procedure", "event", "count"),
     "totals" AS (
       INSERT INTO "IdempotencyCounter" ("scope", "procedure", "event", "count", "updatedAt")
       SELECT "scope", "procedure", "event", sum("count"), now() FROM "inserted" GROUP BY 1, 2, 3
       ON CONFLICT ("scope", "procedure", "event") DO UPDATE SET "count" = "IdempotencyCounter"."count" + EXCLUDED."count", "updatedAt" = now()
       RETURNING 1)
     SELECT (SELECT count(*) FROM "inserted") AS "n", (SELECT count(*) FROM "totals") AS "totals"`,
    [SEED_TENANTS, Object.values(SEED_PROCEDURES), EVENTS],
  );
  await client.query(`ANALYZE "IdempotencyCounterMinute"`);
  return Number(r.rows[0]!.n);
}

/** `count` audit entries (busts and releases by three operators) of the newest keys of seed run `run`. */
export async function seedAudit(client: pg.Client | pg.Pool, run: string, count = 20_000): Promise<number> {
  const r = await client.query(
    `INSERT INTO "AuditEntry" ("actor", "action", "targetType", "targetId", "targetScope", "targetKey", "reason", "details", "createdAt")
     SELECT (ARRAY['admin@example.com', 'night@example.com', 'oncall@example.com'])[1 + n % 3],
            CASE WHEN k."status" = 'PROCESSING' THEN 'key.release' ELSE 'key.bust' END,
            'IdempotencyKey', k."id"::text, k."scope", k."key", 'seeded for the dashboard bench',
            jsonb_build_object('tenant', k."scope", 'key', k."key", 'status', k."status"), now() - make_interval(secs => n)
     FROM (SELECT *, row_number() OVER (ORDER BY "createdAt" DESC) AS n FROM "IdempotencyKey"
           WHERE "key" LIKE 'seed-' || $2 || '-%' ORDER BY "createdAt" DESC LIMIT $1) AS k`,
    [count, run],
  );
  await client.query(`ANALYZE "AuditEntry"`);
  return r.rowCount ?? 0;
}
