// What the database says after the run, read with plain SQL (no app code between the checker and
// the rows). Charges are joined to orders through the provider's `reference` (the merchant's order
// id), not through the provider's idempotency key, whose format may change. The charges are read
// from the provider service's books (services/provider/schema.sql), in a database of their own:
// on their own PostgreSQL in the patroni profiles, where no failover of the shop's can erase them.
import pg from "pg";

export interface OrderFact {
  id: string;
  tenantId: string;
  key: string;
  status: string;
  /** The provider's successful charges whose reference is this order. */
  charges: number;
  outboxRows: number;
}

export interface DatabaseFacts {
  orders: OrderFact[];
  /** productId → [stock now, units sold in orders]. */
  stock: Map<string, { now: number; sold: number }>;
  /** PROCESSING keys whose lease ended more than `graceSeconds` ago. */
  stuckKeys: { scope: string; key: string }[];
  /** Outbox rows neither DELIVERED nor DEAD with a reason. */
  undrainedOutbox: { id: string; status: string; aggregateId: string }[];
  /** Open reconciliation findings. */
  findings: { kind: string; orderId: string | null; chargeIds: string[] }[];
  /** Successful charges whose reference is no order at all. */
  orphanCharges: string[];
  /**
   * Every successful charge in the provider's books: id and reference (the order id it was taken
   * for).
   */
  charges: { id: string; reference: string }[];
  /**
   * Advisory locks still held by some session (a job that lost its unlock, e.g. through PgBouncer).
   */
  advisoryLocks: number;
}

type Queryable = Pick<pg.Client, "query">;

/**
 * The facts from the shop's database at `url` and the provider's books at `providerUrl` (the same
 * by default).
 */
export async function readFactsAt(
  url: string,
  providerUrl: string | undefined,
  graceSeconds: number,
): Promise<DatabaseFacts> {
  const shop = new pg.Client({ connectionString: url });
  const books = providerUrl ? new pg.Client({ connectionString: providerUrl }) : shop;
  await shop.connect();
  try {
    if (books !== shop) await books.connect();
    return await readFacts(shop, graceSeconds, books);
  } finally {
    await shop.end();
    if (books !== shop) await books.end();
  }
}

export async function readFacts(
  db: Queryable,
  graceSeconds: number,
  books: Queryable = db,
): Promise<DatabaseFacts> {
  const charges = await books.query<{ id: string; reference: string }>(
    `SELECT id, reference FROM charges WHERE status = 'SUCCEEDED'`,
  );
  const chargesByOrder = new Map<string, number>();
  for (const c of charges.rows)
    chargesByOrder.set(c.reference, (chargesByOrder.get(c.reference) ?? 0) + 1);
  const orderRows = await db.query<Omit<OrderFact, "charges">>(`
    SELECT o."id"::text AS "id", o."tenantId", o."idempotencyKey" AS "key", o."status"::text AS "status",
      (SELECT count(*)::int FROM "OutboxMessage" m WHERE m."aggregateId" = o."id"::text) AS "outboxRows"
    FROM "Order" o`);
  const orders = orderRows.rows.map((o) => ({ ...o, charges: chargesByOrder.get(o.id) ?? 0 }));
  const orderIds = new Set(orders.map((o) => o.id));
  const stock = await db.query<{ id: string; now: number; sold: number }>(`
    SELECT p."id"::text AS "id", p."stock" AS "now",
      COALESCE((SELECT sum(i."quantity")::int FROM "OrderItem" i WHERE i."productId" = p."id"), 0) AS "sold"
    FROM "Product" p`);
  const stuck = await db.query<{ scope: string; key: string }>(
    `SELECT "scope", "key" FROM "IdempotencyKey"
     WHERE "status" = 'PROCESSING' AND "leaseExpiresAt" < now() - make_interval(secs => $1::float8)`,
    [graceSeconds],
  );
  const outbox = await db.query<{ id: string; status: string; aggregateId: string }>(`
    SELECT "id"::text AS "id", "status"::text AS "status", "aggregateId" FROM "OutboxMessage"
    WHERE NOT ("status" = 'DELIVERED' OR ("status" = 'DEAD' AND coalesce("lastError", '') <> ''))`);
  const findings = await db.query<{ kind: string; orderId: string | null; chargeIds: string[] }>(`
    SELECT "kind"::text AS "kind", "orderId", "chargeIds" FROM "ReconciliationFinding" WHERE "resolvedAt" IS NULL`);
  const locks = await db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM pg_locks 
    WHERE "locktype" = 'advisory' AND "granted" AND "database" = (SELECT "oid" FROM pg_database WHERE "datname" = current_database())`);
  return {
    orders,
    stock: new Map(stock.rows.map((r) => [r.id, { now: r.now, sold: r.sold }])),
    stuckKeys: stuck.rows,
    undrainedOutbox: outbox.rows,
    findings: findings.rows,
    orphanCharges: charges.rows.filter((c) => !orderIds.has(c.reference)).map((c) => c.id),
    charges: charges.rows,
    advisoryLocks: locks.rows[0]?.n ?? 0,
  };
}
