// The dashboard specs' direct line to the test server's database: rows another instance would have
// written (a request that died holding its lease, counters per minute) go in straight, and the
// truth after the clicks is read back from the same tables.
import { randomBytes } from "node:crypto";
import pg from "pg";
import type { APIRequestContext } from "@playwright/test";
import { withDatabase as withClient } from "../packages/idempotency/src/conformance/target";
import { CONTROL_URL } from "./ports";

export async function withDb<T>(
  request: APIRequestContext,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const { url } = (await (await request.get(`${CONTROL_URL}/db/url`)).json()) as { url: string };
  return withClient(url, fn);
}

/** A short random word, so each test's tenants, procedures and keys are its own. */
export const unique = () => randomBytes(4).toString("hex");

/**
 * `n` keys `<prefix>-1` … `<prefix>-n` for `scope`, PROCESSING with a lease that ended
 * `expiredSecondsAgo` ago (negative: still live). Under the sweeper's 5 min grace, so they stay.
 */
export async function insertProcessingKeys(
  client: pg.Client,
  f: { scope: string; prefix: string; n: number; procedure: string; expiredSecondsAgo: number },
): Promise<void> {
  await client.query(
    `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
     SELECT $1, $2 || '-' || i, $3, repeat('0', 64), 'PROCESSING', gen_random_uuid(), now() - make_interval(secs => $5), now() + interval '1 day'
     FROM generate_series(1, $4::int) AS i`,
    [f.scope, f.prefix, f.procedure, f.n, f.expiredSecondsAgo],
  );
}

export async function insertCompletedKey(
  client: pg.Client,
  f: { scope: string; key: string; procedure?: string },
): Promise<string> {
  const r = await client.query<{ id: string }>(
    `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "responseStatus", "responseBody", "completedAt", "expiresAt")
     VALUES ($1, $2, $3, repeat('0', 64), 'COMPLETED', 200, '{"ok":true}', now(), now() + interval '1 day') RETURNING "id"::text AS "id"`,
    [f.scope, f.key, f.procedure ?? "checkout.placeOrder"],
  );
  return r.rows[0]!.id;
}
