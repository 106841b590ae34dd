// The soak's PostgreSQL: the app's own embedded server (tools/db/embedded.ts), in a temp
// folder, kept on disk across the faults (a restart and a stop must find their data again).
// Also the soak's products: a catalog of its own, so the stock arithmetic starts from known
// numbers.
import pg from "pg";
import { startEmbeddedPostgres, type EmbeddedServer } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";

export const DATABASE = "once";
/**
 * The provider service's books: a database of their own (on their own server in the patroni
 * profiles).
 */
export const PROVIDER_DATABASE = "provider";
export const PG_USER = "postgres";
export const PG_PASSWORD = "postgres";

/**
 * Plenty for most, and one product that runs out during the run (its refusals are 412s, stored and
 * replayed).
 */
export const SOAK_PRODUCTS = [
  { sku: "SOAK-A", priceCents: 1_000, stock: 1_000_000 },
  { sku: "SOAK-B", priceCents: 2_550, stock: 1_000_000 },
  { sku: "SOAK-C", priceCents: 399, stock: 1_000_000 },
  { sku: "SOAK-D", priceCents: 12_000, stock: 1_000_000 },
  { sku: "SOAK-SCARCE", priceCents: 4_200, stock: 60 },
] as const;

export interface SoakDatabase {
  port: number;
  url: string;
  /** The provider service's database on the same server (the direct and pgbouncer profiles). */
  providerUrl: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  running(): boolean;
}

export async function startSoakDatabase(dataDir: string, port: number): Promise<SoakDatabase> {
  let server: EmbeddedServer | undefined = await startEmbeddedPostgres({
    dataDir,
    port,
    persistent: true,
  });
  await server.createDatabase(DATABASE);
  await server.createDatabase(PROVIDER_DATABASE);
  const url = server.url(DATABASE);
  await prepareSoakDatabase(url);
  return {
    port,
    url,
    providerUrl: server.url(PROVIDER_DATABASE),
    running: () => server !== undefined,
    async stop() {
      const s = server;
      server = undefined;
      await s?.stop();
    },
    async start() {
      if (!server) server = await startEmbeddedPostgres({ dataDir, port, persistent: true });
    },
  };
}

/** The app's schema, the demo accounts and the soak's products, on a database that exists. */
export async function prepareSoakDatabase(url: string): Promise<void> {
  // The soak signs its shoppers and operator in with the demo tokens (its instances run in demo
  // mode).
  await setupDatabase(url, () => {}, { demo: true });
  await addSoakProducts(url);
}

async function addSoakProducts(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const p of SOAK_PRODUCTS) {
      await client.query(
        `INSERT INTO "Product" ("sku", "name", "description", "priceCents", "currency", "stock")
         VALUES ($1, $1, 'soak product', $2, 'EUR', $3) ON CONFLICT ("sku") DO NOTHING`,
        [p.sku, p.priceCents, p.stock],
      );
    }
  } finally {
    await client.end();
  }
}

/** Product id → stock, read before the fire: the starting point of the stock arithmetic. */
export async function readStock(url: string): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; stock: number }>(
      `SELECT "id"::text AS id, "stock" FROM "Product"`,
    );
    return new Map(rows.map((r) => [r.id, r.stock]));
  } finally {
    await client.end();
  }
}

export async function soakProductIds(url: string): Promise<{ id: string; sku: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; sku: string }>(
      `SELECT "id"::text AS id, "sku" FROM "Product" WHERE "sku" LIKE 'SOAK-%' ORDER BY "sku"`,
    );
    return rows;
  } finally {
    await client.end();
  }
}
