// One definition of the engine's tables: the package's own SQL (packages/idempotency/sql/
// migration.sql, what an adopter runs) is the source, and every other copy is held to it.
// - The shop's migrations (prisma/migrations, applied by our runner) make the same key table,
//   counters and status type, column by column (type, nullability, default) and index by index,
//   each applied to an empty database (schema-matches-migrations.test.ts holds prisma/schema.prisma
//   to those migrations). The shop's admin dashboard adds indexes of its own to the key table (its
//   lists, filters and stuck-lease page), named below with the reason: an adopter without that
//   dashboard should not pay for them on every write.
// - Every schema.prisma that pastes the engine's models (packages/idempotency/prisma/idempotency.prisma,
//   the package's test schema, each example's) asks Prisma for exactly what the package's SQL makes: the
//   models are read by Prisma's own parser and turned into the catalog Prisma Migrate would make
//   (what `prisma migrate diff --from-empty --to-schema` would say, done offline).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  diffCatalogs,
  expectedCatalog,
  getDatamodel,
  readCatalog,
  type Catalog,
} from "../../src/test/prisma-schema";
import { createEmptyDatabase } from "../../src/test/database";
import { withDatabase as withClient } from "../../packages/idempotency/src/conformance/target";
import { migrate } from "./migrate";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PACKAGE_SQL = path.join(ROOT, "packages/idempotency/sql/migration.sql");
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
  const { name, url } = await createEmptyDatabase(admin, "once_engine_tables");
  databases.push(name);
  await prepare(url);
  return withClient(url, readCatalog);
}

/** The engine's part of a catalog: its tables, their indexes, its enum (it has no foreign key). */
function enginePart(catalog: Catalog): Catalog {
  const named = <T>(names: string[], from: Record<string, T>) =>
    Object.fromEntries(names.filter((name) => name in from).map((name) => [name, from[name]!]));
  return {
    enums: named(ENGINE_ENUMS, catalog.enums),
    tables: named(ENGINE_TABLES, catalog.tables),
    indexes: Object.fromEntries(
      Object.entries(catalog.indexes).filter(([, index]) => ENGINE_TABLES.includes(index.table)),
    ),
    foreignKeys: {},
  };
}

let shop: Catalog;
let adopter: Catalog;

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

/**
 * Every schema that carries the engine's models: what the package's README tells an adopter to
 * paste, the package's own test schema, and each example's (found, so a new example is held too).
 */
const SCHEMAS = [
  "packages/idempotency/prisma/idempotency.prisma",
  "packages/idempotency/test/support/schema.prisma",
  ...readdirSync(path.join(ROOT, "examples"))
    .map((example) => `examples/${example}/prisma/schema.prisma`)
    .filter((file) => existsSync(path.join(ROOT, file))),
];
/**
 * Examples whose schema leaves the engine's models out on purpose (the schema says why): the engine
 * reaches its tables by raw SQL only, and their tables come from the package's SQL alone.
 */
const WITHOUT_ENGINE_MODELS = ["examples/plain/prisma/schema.prisma"];

/**
 * The engine's blocks of a schema (`enum IdempotencyStatus`, `model IdempotencyKey`, ...), alone
 * under a bare datasource: the rest of the schema (its generator, a Prisma 6 datasource `url`, the
 * app's own models) is not the engine's business.
 */
function engineBlocks(schema: string): string[] {
  const names = [...ENGINE_ENUMS, ...ENGINE_TABLES];
  return [...schema.matchAll(/^(?:enum|model)\s+(\w+)\s*\{[^}]*\}/gm)]
    .filter(([, name]) => names.includes(name!))
    .map(([block]) => block);
}

const readSchema = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

/** What Prisma Migrate would make of a schema's engine models, or null if it has none. */
function catalogAskedBy(schemaText: string): Catalog | null {
  const blocks = engineBlocks(schemaText);
  if (blocks.length === 0) return null;
  const schema = ['datasource db {\n  provider = "postgresql"\n}', ...blocks].join("\n\n");
  return enginePart(expectedCatalog(getDatamodel(schema)));
}

/** The differences in words: the schema's models against what the package's SQL made. */
const differences = (asked: Catalog) =>
  diffCatalogs(asked, adopter).map((line) =>
    line
      .replace("the migrations", "the package's SQL")
      .replace("the database", "the package's SQL"),
  );

describe("every schema that pastes the engine's models asks for what the package's SQL makes", () => {
  it("finds the examples' schemas (the list is not empty)", () => {
    expect(SCHEMAS).toEqual(
      expect.arrayContaining([
        "examples/minimal/prisma/schema.prisma",
        "examples/servers/prisma/schema.prisma",
        "examples/t3/prisma/schema.prisma",
        ...WITHOUT_ENGINE_MODELS,
      ]),
    );
  });

  it.each(SCHEMAS.filter((file) => !WITHOUT_ENGINE_MODELS.includes(file)))(
    "%s: every engine model, column, type, default and index",
    (file) => {
      const asked = catalogAskedBy(readSchema(file));
      expect(asked, `${file} has none of the engine's models`).not.toBeNull();
      expect(differences(asked!)).toEqual([]);
    },
  );

  it.each(WITHOUT_ENGINE_MODELS)("%s: none of the engine's models, not a part of them", (file) => {
    expect(catalogAskedBy(readSchema(file))).toBeNull();
  });

  it("a schema missing a column, or with a type changed, is caught in words", () => {
    const pasted = readSchema(SCHEMAS[0]!);
    const altered = pasted
      .replace(/^ *awaited .*\n/m, "")
      .replace(/(responseOmittedBytes\s+)Int\?/, "$1BigInt?");
    expect(altered).not.toBe(pasted);
    expect(differences(catalogAskedBy(altered)!)).toEqual([
      'column IdempotencyKey.responseOmittedBytes: type is "bigint" in schema.prisma, "integer" in the package\'s SQL',
      "column IdempotencyKey.awaited: created by the package's SQL, not in schema.prisma",
    ]);
  });
});
