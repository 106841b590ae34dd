// A product's row held locked by a connection of the test's own, until `release`: a checkout of
// that product waits inside its transaction, so a test holds a request in flight for as long as it
// needs without depending on how fast the machine is.
import pg from "pg";
import type { Db } from "@/server/db/client";

export interface ProductLock {
  /** The locking connection's backend. */
  pid: number;
  /** The backends waiting for a lock: this one's, or a checkout's queued behind it. */
  blocked(): Promise<number[]>;
  release(): Promise<void>;
}

export async function lockProduct(url: string, productId: string): Promise<ProductLock> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
  await client.query(`SELECT 1 FROM "Product" WHERE "id" = $1::uuid FOR UPDATE`, [productId]);
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  return {
    pid: rows[0]!.pid,
    blocked: async () => {
      // Inside this transaction pg_stat_activity is read once and kept: read it afresh.
      await client.query("SELECT pg_stat_clear_snapshot()");
      const blocked = await client.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0",
      );
      return blocked.rows.map((r) => r.pid);
    },
    release: async () => {
      await client.query("COMMIT");
      await client.end();
    },
  };
}

/** A product with stock to spare for any test's checkouts (more than 100), the same every time. */
export async function stockedProductId(db: Db): Promise<string> {
  const [product] = await db.$queryRaw<{ id: string }[]>`
    SELECT "id"::text AS "id" FROM "Product" WHERE "stock" > 100 ORDER BY "sku" LIMIT 1`;
  return product!.id;
}
