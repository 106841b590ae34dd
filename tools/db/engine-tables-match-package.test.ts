// One definition of the engine's tables: the shop's migrations (prisma/migrations, applied by our
// runner) and the package's own SQL (packages/idempotency/sql/migration.sql, what an adopter runs)
// make the same key table, counters and status type, column by column (type, nullability,
// default) and index by index, each applied to an empty database. The shop's admin dashboard adds
// indexes of its own to the key table (its lists, filters and stuck-lease page), named below with
// the reason: an adopter without that dashboard should not pay for them on every write.
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { readCatalog, type Catalog } from "../../src/test/prisma-schema";
import { migrate } from "./migrate";

const PACKAGE_SQL = path.resolve(
  import.meta.dirname,
  "../../packages/idempotency/sql/migration.sql",
);
const ENGINE_TABLES = ["IdempotencyKey", "IdempotencyCounter", "IdempotencyCounterMinute"];
const ENGINE_ENUMS = ["IdempotencyStatus"];

/**
 * Indexes the shop adds for its dashboard (prisma/schema.prisma says which query each serves):
 * newest first with and without each filter, a key found by its value or procedure prefix.
 */
const DASHBOARD_INDEXES = [
  "IdempotencyKey_createdAt_id_idx",
  "IdempotencyKey_status_createdAt_id_idx",
  "IdempotencyKey_scope_createdAt_id_idx",
  "IdempotencyKey_procedure_createdAt_id_idx",
  "IdempotencyKey_key_idx",
  "IdempotencyKey_procedure_idx",
];
/**
 * A package index the shop replaces by a wider one of its own that starts with the same columns, so
 * it serves the package's queries too (the sweeper's `status, leaseExpiresAt`) and the dashboard's
 * stuck-lease page besides.
 */
const WIDENED: Record<string, string> = {
  IdempotencyKey_status_leaseExpiresAt_idx: "IdempotencyKey_stuck_page_idx",
};

let admin: pg.Client;
const databases: string[] = [];

/** A new empty database (not the seeded template), made ready by `prepare`; its catalog. */
async function catalogOf(prepare: (url: string) => Promise<void>): Promise<Catalog> {
  const name = `once_engine_tables_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE "${name}"`);
  databases.push(name);
  const url = inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);
  await prepare(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await readCatalog(client);
  } finally {
    await client.end();
  }
}

/** The engine's part of a catalog: its tables, their indexes, its enum. */
function enginePart(catalog: Catalog) {
  return {
    enums: Object.fromEntries(ENGINE_ENUMS.map((name) => [name, catalog.enums[name]])),
    tables: Object.fromEntries(ENGINE_TABLES.map((name) => [name, catalog.tables[name]])),
    indexes: Object.fromEntries(
      Object.entries(catalog.indexes).filter(([, index]) => ENGINE_TABLES.includes(index.table)),
    ),
  };
}

let shop: ReturnType<typeof enginePart>;
let adopter: ReturnType<typeof enginePart>;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  shop = enginePart(
    await catalogOf(async (url) => {
      await migrate(url);
    }),
  );
  const sql = await readFile(PACKAGE_SQL, "utf8");
  adopter = enginePart(
    await catalogOf(async (url) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(sql).finally(() => client.end());
    }),
  );
});

afterAll(async () => {
  for (const name of databases)
    await admin?.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin?.end();
});

describe("the shop's migrations and the package's SQL make the same engine tables", () => {
  it("the package's SQL makes every engine table (the comparison is not empty)", () => {
    for (const table of ENGINE_TABLES)
      expect(Object.keys(adopter.tables[table] ?? {})).not.toEqual([]);
  });

  it.each(ENGINE_TABLES)("%s: the same columns, types, nullability and defaults", (table) => {
    expect(shop.tables[table]).toEqual(adopter.tables[table]);
  });

  it("the same indexes (name, columns, uniqueness, method), besides the dashboard's", () => {
    const without = (indexes: typeof shop.indexes, names: string[]) =>
      Object.fromEntries(Object.entries(indexes).filter(([name]) => !names.includes(name)));
    expect(without(shop.indexes, [...DASHBOARD_INDEXES, ...Object.values(WIDENED)])).toEqual(
      without(adopter.indexes, Object.keys(WIDENED)),
    );
  });

  it("the dashboard's indexes are all there (the list above is not stale)", () => {
    for (const name of DASHBOARD_INDEXES) expect(shop.indexes[name], name).toBeDefined();
  });

  it.each(Object.entries(WIDENED))(
    "the package's %s is served by the shop's %s: it starts with the same columns",
    (packageIndex, shopIndex) => {
      const narrow = adopter.indexes[packageIndex]!;
      const wide = shop.indexes[shopIndex]!;
      expect(wide.unique).toBe(narrow.unique);
      expect(wide.columns.slice(0, narrow.columns.length)).toEqual(narrow.columns);
    },
  );

  it("the same status type", () => {
    expect(shop.enums).toEqual(adopter.enums);
  });
});
