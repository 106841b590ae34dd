// The provider's books: charges (one per shop and idempotency key) and the events that report them.
// Plain SQL on its own pool. Every read and write names the shop (the caller its secret key
// authenticated): a key, a cursor or a reference means something only within its shop.
import { randomBytes } from "node:crypto";
import type pg from "pg";

export const ChargeStatus = { SUCCEEDED: "SUCCEEDED", FAILED: "FAILED" } as const;
export type ChargeStatus = (typeof ChargeStatus)[keyof typeof ChargeStatus];
export const EventType = { SUCCEEDED: "charge.succeeded", FAILED: "charge.failed" } as const;

/** Charges above 5 000 EUR are declined: the simulation's way of producing a failed payment. */
export const DECLINE_ABOVE_CENTS = 500_000;

/** What a charge request's body says (POST /v1/charges); the idempotency key comes in a header. */
export type ChargeParams = Readonly<
  Record<"reference" | "currency", string> & { amountCents: number }
>;

/** A charge as the API returns it; `created` in unix seconds, as card processors write it. */
export interface Charge {
  id: string;
  object: "charge";
  status: ChargeStatus;
  reference: string;
  amountCents: number;
  currency: string;
  created: number;
}

export const newId = (prefix: "ch" | "evt") => `${prefix}_${randomBytes(12).toString("hex")}`;

const CHARGE_COLUMNS = `id, status, reference, amount_cents AS "amountCents", currency, extract(epoch FROM created_at)::float8 AS "created"`;
type ChargeRow = Omit<Charge, "object">;
const toCharge = (row: ChargeRow): Charge => ({
  ...row,
  object: "charge",
  created: Math.floor(row.created),
});

type ChargeOutcome = { kind: "created" | "replayed" | "key_reused"; charge: Charge };

/**
 * Charges once per (shop, idempotency key). One statement inserts the charge and its event, or
 * nothing when the key exists: a concurrent request with the same key waits for the first to
 * commit, inserts nothing, and the read after it (a new snapshot) finds the first charge. A repeat
 * with other parameters is refused, as real providers do, instead of answering for another order.
 */
export async function charge(
  pool: pg.Pool,
  shopId: string,
  idempotencyKey: string,
  request: ChargeParams,
): Promise<ChargeOutcome> {
  const created = await insertCharge(pool, shopId, idempotencyKey, request);
  if (created) return { kind: "created", charge: toCharge(created) };
  const first = await pool.query<ChargeRow>(
    `SELECT ${CHARGE_COLUMNS} FROM charges WHERE shop_id = $1 AND idempotency_key = $2`,
    [shopId, idempotencyKey],
  );
  const found = toCharge(first.rows[0]!);
  const same = (["reference", "amountCents", "currency"] as const).every(
    (field) => found[field] === request[field],
  );
  return { kind: same ? "replayed" : "key_reused", charge: found };
}

/** The charge and its event, inserted by one statement; undefined when the key exists. */
async function insertCharge(
  pool: pg.Pool,
  shopId: string,
  idempotencyKey: string,
  request: ChargeParams,
): Promise<ChargeRow | undefined> {
  const status =
    request.amountCents > DECLINE_ABOVE_CENTS ? ChargeStatus.FAILED : ChargeStatus.SUCCEEDED;
  const type = status === ChargeStatus.SUCCEEDED ? EventType.SUCCEEDED : EventType.FAILED;
  const created = await pool.query<ChargeRow>(
    `WITH c AS (
       INSERT INTO charges (id, shop_id, idempotency_key, reference, amount_cents, currency, status)
       VALUES ($1, $9, $2, $3, $4, $5, $6) ON CONFLICT (shop_id, idempotency_key) DO NOTHING RETURNING *
     ), e AS (
       INSERT INTO events (id, type, charge_id, payload)
       SELECT $7, $8, c.id, jsonb_build_object('chargeId', c.id, 'status', c.status, 'reference', c.reference,
                                              'amountCents', c.amount_cents, 'currency', c.currency)
       FROM c
     )
     SELECT ${CHARGE_COLUMNS} FROM c`,
    [
      newId("ch"),
      idempotencyKey,
      request.reference,
      request.amountCents,
      request.currency,
      status,
      newId("evt"),
      type,
      shopId,
    ],
  );
  return created.rows[0];
}

export interface ListQuery {
  /** Charges created at or after this unix second. */
  createdGte?: number;
  /** Charges created before this unix second. */
  createdLt?: number;
  /** The last charge of the previous page: the list goes on after it. */
  startingAfter?: string;
  /** Only the charge made under this idempotency key. */
  idempotencyKey?: string;
  limit: number;
}

/**
 * One shop's charges oldest first, by (created, id): a cursor (`startingAfter`) is a position in
 * that order, so a page never repeats or skips a charge that existed when the first page was read.
 */
export async function listCharges(
  pool: pg.Pool,
  shopId: string,
  q: ListQuery,
): Promise<{ data: Charge[]; hasMore: boolean }> {
  const rows = await pool.query<ChargeRow>(
    `SELECT ${CHARGE_COLUMNS} FROM charges
     WHERE shop_id = $6
       AND ($1::float8 IS NULL OR created_at >= to_timestamp($1))
       AND ($2::float8 IS NULL OR created_at < to_timestamp($2))
       AND ($3::text IS NULL OR (created_at, id) > (SELECT created_at, id FROM charges WHERE id = $3 AND shop_id = $6))
       AND ($5::text IS NULL OR idempotency_key = $5)
     ORDER BY created_at, id LIMIT $4`,
    [
      q.createdGte ?? null,
      q.createdLt ?? null,
      q.startingAfter ?? null,
      q.limit + 1,
      q.idempotencyKey ?? null,
      shopId,
    ],
  );
  return { data: rows.rows.slice(0, q.limit).map(toCharge), hasMore: rows.rows.length > q.limit };
}

/**
 * Whether this shop has a charge with this id (a cursor naming none of its charges is a 400:
 * another shop's charge id is no position in this shop's list).
 */
export async function chargeExists(pool: pg.Pool, shopId: string, id: string): Promise<boolean> {
  return (
    (await pool.query(`SELECT 1 FROM charges WHERE id = $1 AND shop_id = $2`, [id, shopId]))
      .rowCount === 1
  );
}
