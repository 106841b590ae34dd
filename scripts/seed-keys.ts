// `npm run seed:keys -- [count]`: seeds idempotency keys into DATABASE_URL (or the running embedded
// database of `npm run dev`) for the admin
// dashboard's scale test (default 100 000), in one `INSERT … SELECT generate_series` statement
// (about a second for 100 000 rows), then ANALYZEs the table so the planner knows its size. Past a
// million keys (`bulk`, for a scratch database: the 10 million of bench:admin) the table's
// secondary indexes are dropped, the rows go in by the million, and the indexes are built again
// afterwards: one sorted build per index instead of eleven index insertions per row.
//
// The mix looks like a busy day: keys spread over the last 22 hours, five tenants' checkouts and,
// one key in a hundred, an operator's action (scope "admin"); 90 % COMPLETED, 7 % FAILED, 3 %
// PROCESSING: numbers 97, 98 and 99 of each hundred, the odd two with an expired lease (stuck),
// the even one live. So 2 % of the keys inserted are stuck; the audit's releases then remove the
// stuck ones among the keys it audits (the newest). At the default 100 000: 110 000 inserted with
// 2 200 stuck, the audit removes the newest 10 000 finished or stuck keys (numbers 1 to 10 101,
// 202 of them stuck), and 1 998 stuck leases remain, as the seed's last line reports. Keys are
// "seed-<run>-<n>", so running it again adds another batch. A stuck lease ended a minute before the seed: a running
// server's sweeper releases it four minutes later (five past its lease's end), as it does any
// lease whose client never came back; the dashboard's bulk release can free them before that.
import { randomBytes } from "node:crypto";
import { pathToFileURL } from "node:url";
import pg from "pg";
import { resolveDatabaseUrl } from "../tools/db/url";
import { seedAudit, seedCounterMinutes } from "./seed-dashboard";
import { ADMIN_PROCEDURES, ADMIN_SCOPE, SEED_TENANTS, TENANT_PROCEDURE } from "./seed-data";

/** Past this many keys the seed drops and rebuilds the indexes (see above). */
export const BULK_SEED_FROM = 1_000_000;
const CHUNK = 1_000_000;

/** How many keys besides `count` the seed audits as busted or released: a tenth, 20 000 at most. */
export const auditedOf = (count: number) => Math.min(20_000, Math.floor(count / 10));

/**
 * Inserts `count` keys named "seed-<run>-<n>"; returns the run, so what else is seeded names only
 * these keys.
 */
export async function seedKeys(
  client: pg.Client | pg.Pool,
  count = 100_000,
  log: (line: string) => void = () => {},
): Promise<{ inserted: number; ms: number; run: string }> {
  const run = randomBytes(3).toString("hex");
  const started = performance.now();
  if (count < BULK_SEED_FROM) {
    const inserted = await insertKeys(client, run, 1, count, count);
    await client.query(`ANALYZE "IdempotencyKey"`);
    return { inserted, ms: performance.now() - started, run };
  }
  const { rows: indexes } = await client.query<{ name: string; definition: string }>(
    `SELECT indexname AS "name", indexdef AS "definition" FROM pg_indexes WHERE tablename = 'IdempotencyKey' AND indexname <> 'IdempotencyKey_pkey'`,
  );
  for (const index of indexes) await client.query(`DROP INDEX "${index.name}"`);
  let inserted = 0;
  for (let first = 1; first <= count; first += CHUNK) {
    inserted += await insertKeys(client, run, first, Math.min(count, first + CHUNK - 1), count);
    log(`${inserted} keys in ${Math.round((performance.now() - started) / 1000)} s`);
  }
  await client.query(`SET maintenance_work_mem = '1GB'`);
  for (const index of indexes) {
    await client.query(index.definition);
    log(`index ${index.name} built at ${Math.round((performance.now() - started) / 1000)} s`);
  }
  await client.query(`VACUUM ANALYZE "IdempotencyKey"`);
  return { inserted, ms: performance.now() - started, run };
}

/**
 * Keys first..last of a seed of `count` (spread over 22 hours whatever the count), in one
 * statement.
 */
async function insertKeys(
  client: pg.Client | pg.Pool,
  run: string,
  first: number,
  last: number,
  count: number,
): Promise<number> {
  const result = await client.query(
    `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt",
       "attempts", "responseStatus", "responseBody", "createdAt", "updatedAt", "completedAt", "expiresAt")
     SELECT
       CASE WHEN i % 100 = 0 THEN $5 ELSE ($3::text[])[1 + i % 5] END,
       'seed-' || $2 || '-' || i,
       CASE WHEN i % 100 = 0 THEN ($6::text[])[1 + (i / 100) % cardinality($6::text[])] ELSE $4 END,
       encode(sha256(convert_to($2 || i::text, 'UTF8')), 'hex'),
       st::"IdempotencyStatus",
       CASE WHEN st = 'PROCESSING' THEN gen_random_uuid() END,
       -- PROCESSING: odd i stuck (lease ended a minute ago), even i live (ends in ten minutes).
       CASE WHEN st = 'PROCESSING' THEN now() + CASE WHEN i % 2 = 1 THEN interval '-1 minute' ELSE interval '10 minutes' END END,
       1 + (i % 7 = 0)::int,
       CASE st WHEN 'COMPLETED' THEN 200 WHEN 'FAILED' THEN 412 END,
       CASE WHEN st = 'COMPLETED' AND i % 100 = 0 THEN jsonb_build_object('auditId', gen_random_uuid())
            ELSE CASE st WHEN 'COMPLETED' THEN jsonb_build_object('order', jsonb_build_object('id', gen_random_uuid(), 'totalCents', 1450 * (1 + i % 4)))
               WHEN 'FAILED' THEN jsonb_build_object('code', 'PRECONDITION_FAILED', 'reason', 'out_of_stock') END END,
       created, created,
       CASE WHEN st <> 'PROCESSING' THEN created + interval '150 ms' END,
       created + interval '24 hours'
     FROM (
       SELECT i,
         -- newest first = smallest i; spread over 22 hours (100 000 keys: 0.8 s apart)
         now() - (i * make_interval(secs => 79200.0 / $1::int)) AS created,
         CASE WHEN i % 100 < 90 THEN 'COMPLETED' WHEN i % 100 < 97 THEN 'FAILED' ELSE 'PROCESSING' END AS st
       FROM generate_series($7::int, $8::int) AS i
     ) AS g
     ON CONFLICT DO NOTHING`,
    [count, run, SEED_TENANTS, TENANT_PROCEDURE, ADMIN_SCOPE, ADMIN_PROCEDURES, first, last],
  );
  return result.rowCount ?? 0;
}

/** The seed run's keys whose lease has ended unreleased: what the bulk release is for. */
export async function countStuck(client: pg.Client | pg.Pool, run: string): Promise<number> {
  const r = await client.query<{ n: string }>(
    `SELECT count(*) AS "n" FROM "IdempotencyKey"
     WHERE "key" LIKE 'seed-' || $1 || '-%' AND "status" = 'PROCESSING' AND "leaseExpiresAt" < now()`,
    [run],
  );
  return Number(r.rows[0]!.n);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const url = resolveDatabaseUrl();
  const count = Number(process.argv[2] ?? 100_000);
  if (!Number.isInteger(count) || count < 1) {
    console.error(`count must be a positive integer, got ${process.argv[2]}`);
    process.exit(2);
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A tenth more keys than asked: the audit's busts and releases remove theirs, leaving `count`.
    const audited = auditedOf(count);
    const { inserted, ms, run } = await seedKeys(client, count + audited, (line) =>
      console.log(`[seed-keys] ${line}`),
    );
    console.log(
      `[seed-keys] inserted ${inserted} idempotency keys in ${Math.round(ms)} ms (run ${run})`,
    );
    // The dashboard's history too: counters per minute for its chart, an audit log for its filters,
    // both beside what is real (never over it).
    console.log(
      `[seed-keys] ${await seedCounterMinutes(client)} counter minutes, ${await seedAudit(client, run, audited)} audit entries (their keys busted or released, so removed): ${count} seeded keys remain, ${await countStuck(client, run)} of them stuck leases`,
    );
  } finally {
    await client.end();
  }
}
