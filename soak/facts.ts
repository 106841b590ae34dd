// What the database says after the run, read with plain SQL (no app code between the checker and
// the rows). Charges are joined to orders through the provider's `reference` (the merchant's order
// id), not through the provider's idempotency key, whose format may change.
import type pg from "pg";

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
  /** Advisory locks still held by some session (a job that lost its unlock, e.g. through PgBouncer). */
  advisoryLocks: number;
}

type Queryable = Pick<pg.Client, "query">;

export async function readFacts(db: Queryable, graceSeconds: number): Promise<DatabaseFacts> {
  const orders = await db.query<OrderFact>(`
    SELECT o."id"::text AS "id", o."tenantId", o."idempotencyKey" AS "key", o."status"::text AS "status",
      (SELECT count(*)::int FROM "ProviderCharge" c WHERE c."reference" = o."id"::text AND c."status" = 'SUCCEEDED') AS "charges",
      (SELECT count(*)::int FROM "OutboxMessage" m WHERE m."aggregateId" = o."id"::text) AS "outboxRows"
    FROM "Order" o`);
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
  const orphans = await db.query<{ id: string }>(`
    SELECT c."id" FROM "ProviderCharge" c
    WHERE c."status" = 'SUCCEEDED' AND NOT EXISTS (SELECT 1 FROM "Order" o WHERE o."id"::text = c."reference")`);
  const locks = await db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM pg_locks 
    WHERE "locktype" = 'advisory' AND "granted" AND "database" = (SELECT "oid" FROM pg_database WHERE "datname" = current_database())`);
  return {
    orders: orders.rows,
    stock: new Map(stock.rows.map((r) => [r.id, { now: r.now, sold: r.sold }])),
    stuckKeys: stuck.rows,
    undrainedOutbox: outbox.rows,
    findings: findings.rows,
    orphanCharges: orphans.rows.map((r) => r.id),
    advisoryLocks: locks.rows[0]?.n ?? 0,
  };
}
