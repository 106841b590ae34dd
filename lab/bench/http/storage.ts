// What a stored key costs in PostgreSQL, measured on the keys the bench itself wrote (each holds a
// real checkout answer): the row as stored, the answer alone, and the whole table (heap, TOAST,
// every index) divided by the number of keys.
import type pg from "pg";

export interface Storage {
  keys: number;
  rowBytes: number;
  answerBytes: number;
  heapBytesPerKey: number;
  indexBytesPerKey: number;
  totalBytesPerKey: number;
  /** Each index's size per key, largest first. */
  indexes: { name: string; bytesPerKey: number }[];
}

export async function measureStorage(pool: pg.Pool): Promise<Storage> {
  // VACUUM first: the bench's own updates (PROCESSING → COMPLETED) leave dead row versions that a
  // steady-state table reuses; counting them would overstate the cost of a key.
  await pool.query(`VACUUM ANALYZE "IdempotencyKey"`);
  const { rows } = await pool.query<{
    keys: number;
    row: number;
    answer: number;
    heap: string;
    indexes: string;
    total: string;
  }>(
    `SELECT count(*)::int AS "keys",
            avg(pg_column_size(k.*))::float8 AS "row",
            avg(pg_column_size(k."responseBody"))::float8 AS "answer",
            pg_table_size('"IdempotencyKey"') AS "heap",
            pg_indexes_size('"IdempotencyKey"') AS "indexes",
            pg_total_relation_size('"IdempotencyKey"') AS "total"
     FROM "IdempotencyKey" k`,
  );
  const r = rows[0]!;
  const per = (bytes: string) => (r.keys ? Number(bytes) / r.keys : NaN);
  const { rows: indexRows } = await pool.query<{ name: string; bytes: string }>(
    `SELECT c.relname AS "name", pg_relation_size(i.indexrelid) AS "bytes"
     FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
     WHERE i.indrelid = '"IdempotencyKey"'::regclass ORDER BY pg_relation_size(i.indexrelid) DESC`,
  );
  return {
    keys: r.keys,
    rowBytes: r.row,
    answerBytes: r.answer,
    heapBytesPerKey: per(r.heap),
    indexBytesPerKey: per(r.indexes),
    totalBytesPerKey: per(r.total),
    indexes: indexRows.map((i) => ({ name: i.name, bytesPerKey: per(i.bytes) })),
  };
}

export function storageMarkdown(s: Storage): string {
  return [
    `| stored keys (checkout answers) | row (pg_column_size) | its answer | table + TOAST per key | indexes per key | total per key (pg_total_relation_size / keys) |`,
    "|---:|---:|---:|---:|---:|---:|",
    `| ${s.keys} | ${s.rowBytes.toFixed(0)} B | ${s.answerBytes.toFixed(0)} B | ${s.heapBytesPerKey.toFixed(0)} B | ${s.indexBytesPerKey.toFixed(0)} B | ${s.totalBytesPerKey.toFixed(0)} B |`,
    "",
    `indexes per key: ${s.indexes.map((i) => `${i.name} ${i.bytesPerKey.toFixed(0)} B`).join(", ")}`,
  ].join("\n");
}
