// The key table hash-partitioned by scope, for bench:capacity's scratch database: what the scale
// document recommends past one table, tried here. A unique index on a partitioned table must
// include the partition key, so (scope, key) stays unique but the primary key on "id" becomes a
// plain index in each partition. Every engine statement names the key's scope (completion,
// release and takeover by scope and id), so each prunes to one partition. Same other indexes as
// the app's table.
import type pg from "pg";

export const PARTITIONS = 8;

const INDEXES = [
  `("id")`,
  `("createdAt" DESC, "id" DESC)`,
  `("status", "createdAt" DESC, "id" DESC)`,
  `("scope", "createdAt" DESC, "id" DESC)`,
  `("procedure", "createdAt" DESC, "id" DESC)`,
  `("status", "leaseExpiresAt")`,
  `("expiresAt")`,
  `("scope", "expiresAt")`,
  `("key" text_pattern_ops)`,
  `("procedure" text_pattern_ops)`,
];

export const PARTITIONED_SQL = `
  ALTER TABLE "IdempotencyKey" RENAME TO "IdempotencyKeyPlain";
  CREATE TABLE "IdempotencyKey" (LIKE "IdempotencyKeyPlain" INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY HASH ("scope");
  DROP TABLE "IdempotencyKeyPlain";
  CREATE UNIQUE INDEX "IdempotencyKey_scope_key_key" ON "IdempotencyKey" ("scope", "key");
  ${INDEXES.map((columns, i) => `CREATE INDEX "IdempotencyKey_p_idx${i}" ON "IdempotencyKey" ${columns};`).join("\n  ")}
  ${Array.from({ length: PARTITIONS }, (_, r) => `CREATE TABLE "IdempotencyKey_p${r}" PARTITION OF "IdempotencyKey" FOR VALUES WITH (MODULUS ${PARTITIONS}, REMAINDER ${r});`).join("\n  ")}`;

/**
 * Rows, heap bytes and index bytes of the key table (summed over its partitions when partitioned).
 */
export async function tableBytes(pool: pg.Pool, partitioned: boolean) {
  const leaves = partitioned
    ? `SELECT relid FROM pg_partition_tree('"IdempotencyKey"') WHERE isleaf`
    : `SELECT '"IdempotencyKey"'::regclass AS relid`;
  const { rows } = await pool.query<{ rows: string; table: string; indexes: string }>(
    `SELECT (SELECT count(*) FROM "IdempotencyKey")::text AS "rows",
            sum(pg_table_size(relid))::text AS "table", sum(pg_indexes_size(relid))::text AS "indexes" FROM (${leaves}) AS l`,
  );
  return {
    rows: Number(rows[0]!.rows),
    tableBytes: Number(rows[0]!.table),
    indexBytes: Number(rows[0]!.indexes),
  };
}
