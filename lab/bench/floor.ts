// The floor: the same protocol work written by hand in SQL on a bare pg pool — reserve with
// INSERT … ON CONFLICT DO NOTHING RETURNING, read on conflict, the business write and the fenced
// completion in one transaction. Whatever the engine costs above this is the price of Prisma,
// tRPC and our own code. Every statement is prepared (named), as the engine's and Prisma's are
// on a direct connection: the floor is the best hand-written SQL, not a handicapped one.
import { createHash, randomUUID } from "node:crypto";
import type pg from "pg";
import type { CountingPool } from "./harness";

const fingerprint = (request: unknown) =>
  createHash("sha256").update(JSON.stringify(request)).digest("hex");

export type FloorAnswer = { status: 200 | 409 | 422; replayed: boolean; body: unknown };

/**
 * The reservation as it commits: synchronously (the floor as it has always been measured), or
 * with `synchronous_commit` off for its own transaction, as the engine's does (design.md, step 3):
 * the tightest the protocol can be written by hand.
 */
const RESERVE_COMMIT = {
  sync: { name: "floor_reserve", cfg: "", from: "" },
  async: {
    name: "floor_reserve_async",
    cfg: `"cfg" AS (SELECT set_config('synchronous_commit', 'off', true)),`,
    from: `FROM "cfg"`,
  },
} as const;

type ReservedRow = {
  id: string;
  inserted: boolean;
  fingerprint: string;
  status: string;
  responseBody: unknown;
};

export async function floorIdempotent(
  pool: CountingPool,
  scope: string,
  key: string,
  request: { value: string },
  reservation: keyof typeof RESERVE_COMMIT = "sync",
): Promise<FloorAnswer> {
  const fp = fingerprint(request);
  const token = randomUUID();
  const row = await reserveOrRead(pool, RESERVE_COMMIT[reservation], scope, key, fp, token);
  if (!row.inserted) return answerFromStoredKey(row, fp);
  return completeWithEffect(pool, row.id, token, scope, request.value);
}

/**
 * Reserve or read in one statement, as the engine does; read again if a racing insert hid the
 * row (the CTE's snapshot cannot see a row inserted after it began, so neither branch returns it).
 */
async function reserveOrRead(
  pool: CountingPool,
  commit: (typeof RESERVE_COMMIT)[keyof typeof RESERVE_COMMIT],
  scope: string,
  key: string,
  fp: string,
  token: string,
): Promise<ReservedRow> {
  const reserved = await pool.query<ReservedRow>({
    name: commit.name,
    text: `WITH ${commit.cfg} "inserted" AS (
       INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
       SELECT $1, $2, 'effect', $3, 'PROCESSING', $4::uuid, now() + interval '30 seconds', now() + interval '1 day' ${commit.from}
       ON CONFLICT ("scope", "key") DO NOTHING
       RETURNING "id", true AS "inserted", "fingerprint", "status"::text AS "status", "responseBody")
     SELECT * FROM "inserted"
     UNION ALL
     SELECT "id", false, "fingerprint", "status"::text, "responseBody" FROM "IdempotencyKey"
     WHERE "scope" = $1 AND "key" = $2 AND NOT EXISTS (SELECT 1 FROM "inserted")`,
    values: [scope, key, fp, token],
  });
  if (reserved.rows[0]) return reserved.rows[0];
  const again = await pool.query<ReservedRow>({
    name: "floor_read_again",
    text: `SELECT "id", false AS "inserted", "fingerprint", "status"::text AS "status", "responseBody" FROM "IdempotencyKey" WHERE "scope" = $1 AND "key" = $2`,
    values: [scope, key],
  });
  return again.rows[0]!;
}

/** A key someone else reserved: a different request, one still running, or a replay. */
function answerFromStoredKey(row: ReservedRow, fp: string): FloorAnswer {
  if (row.fingerprint !== fp) return { status: 422, replayed: false, body: null };
  if (row.status === "PROCESSING") return { status: 409, replayed: false, body: null };
  return { status: 200, replayed: true, body: row.responseBody };
}

/** The business write and the fenced completion commit together, or neither does. */
async function completeWithEffect(
  pool: CountingPool,
  id: string,
  token: string,
  scope: string,
  value: string,
): Promise<FloorAnswer> {
  return inTransaction(pool, async (client) => {
    const effect = await insertEffect(client, scope, value);
    const body = { effectId: effect.rows[0]!.id, value };
    const done = await client.query({
      name: "floor_complete",
      text: `UPDATE "IdempotencyKey" SET "status" = 'COMPLETED', "responseStatus" = 200, "responseBody" = $3::jsonb, "completedAt" = now(),
         "updatedAt" = now(), "leaseToken" = NULL, "leaseExpiresAt" = NULL
       WHERE "id" = $1::uuid AND "leaseToken" = $2::uuid`,
      values: [id, token, JSON.stringify(body)],
    });
    if (done.rowCount !== 1) throw new Error("lease lost");
    return { status: 200, replayed: false, body };
  });
}

/** `work` in one transaction on a pooled connection: committed, or rolled back if it throws. */
async function inTransaction<T>(
  pool: CountingPool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK");
    throw error;
  } finally {
    client.release();
  }
}

/** The business write itself: the same row the engine's handler inserts. */
function insertEffect(client: pg.PoolClient, scope: string, value: string) {
  return client.query<{ id: number }>({
    name: "floor_effect",
    text: `INSERT INTO "TestEffect" ("scope", "value") VALUES ($1, $2) RETURNING "id"`,
    values: [scope, value],
  });
}

/**
 * The floor's business transaction with no idempotency (BEGIN, the write, COMMIT): the floor above
 * this is what the protocol itself costs by hand (a reservation and a completion, two round
 * trips), the least any engine of this design can add on this machine.
 */
export async function floorTransactionOnly(
  pool: CountingPool,
  scope: string,
  value: string,
): Promise<number> {
  const effect = await inTransaction(pool, (client) => insertEffect(client, scope, value));
  return effect.rows[0]!.id;
}

/**
 * The least a replay can cost: one indexed read of the stored answer by (scope, key), no
 * reservation attempt. The engine's replay is compared with this too.
 */
export async function floorRead(pool: CountingPool, scope: string, key: string): Promise<unknown> {
  const { rows } = await pool.query({
    name: "floor_read",
    text: `SELECT "status"::text, "fingerprint", "responseBody" FROM "IdempotencyKey" WHERE "scope" = $1 AND "key" = $2`,
    values: [scope, key],
  });
  return rows[0];
}

/** Authentication as the app does it: the token's hash to its user. */
export async function floorAuthenticate(pool: CountingPool, tokenHash: string): Promise<string> {
  const { rows } = await pool.query<{ tenantId: string }>({
    name: "floor_authenticate",
    text: `SELECT u."tenantId" FROM "ApiToken" t JOIN "User" u ON u."id" = t."userId" WHERE t."tokenHash" = $1`,
    values: [tokenHash],
  });
  return rows[0]!.tenantId;
}
