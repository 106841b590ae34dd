// The migrations equal schema.prisma: what `prisma migrate diff --from-migrations --to-schema`
// would prove, done offline. An empty database is migrated with our runner, its catalog read from
// pg_catalog, and compared with the catalog schema.prisma asks for (parsed by Prisma's own
// WebAssembly parser). Any difference fails with a sentence naming the table, column or index.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migrate } from "./migrate";
import {
  defaultConstraintName,
  diffCatalogs,
  expectedCatalog,
  getDatamodel,
  readCatalog,
  readCheckConstraints,
  type Catalog,
} from "../../src/test/prisma-schema";

const SCHEMA_PATH = path.resolve(import.meta.dirname, "../../prisma/schema.prisma");
const schema = readFileSync(SCHEMA_PATH, "utf8");

/**
 * CHECK constraints schema.prisma cannot express: each one written by hand in a migration, on
 * purpose.
 */
const EXPECTED_CHECKS = { "Product.Product_stock_nonnegative": "CHECK (stock >= 0)" };

let admin: pg.Client;
let client: pg.Client;
let databaseName: string;
let migrated: Catalog;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  databaseName = `once_schema_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE DATABASE "${databaseName}"`); // empty: not the seeded template
  const url = inject("pgAdminUrl").replace(/\/postgres$/, `/${databaseName}`);
  await migrate(url);
  client = new pg.Client({ connectionString: url });
  await client.connect();
  migrated = await readCatalog(client);
});

afterAll(async () => {
  await client?.end();
  await admin?.query(`DROP DATABASE IF EXISTS "${databaseName}" WITH (FORCE)`);
  await admin?.end();
});

/**
 * schema.prisma with `replace` applied once; fails loudly if the anchor is gone, so the test cannot
 * silently test nothing. A run of spaces in the anchor matches any run (`prisma format` realigns a
 * model's columns when a longer field joins it).
 */
function alteredSchema(anchor: string, replacement: string): string {
  const pattern = new RegExp(anchor.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ +/g, " +"));
  expect(pattern.test(schema), `anchor ${JSON.stringify(anchor)} not in schema.prisma`).toBe(true);
  return schema.replace(pattern, replacement);
}

const diffFor = (schemaText: string) =>
  diffCatalogs(expectedCatalog(getDatamodel(schemaText)), migrated);

describe("the migrated database equals schema.prisma", () => {
  it("has no difference in enums, tables, columns, indexes or foreign keys", () => {
    expect(diffFor(schema)).toEqual([]);
  });

  it("holds every model of the schema, and sees descending index columns and the migration's checks", async () => {
    const datamodel = getDatamodel(schema);
    expect(Object.keys(migrated.tables).sort()).toEqual(datamodel.models.map((m) => m.name).sort());
    expect(migrated.indexes["IdempotencyKey_status_createdAt_id_idx"]?.columns).toEqual([
      "status",
      "createdAt DESC",
      "id DESC",
    ]);
    expect(await readCheckConstraints(client)).toEqual(EXPECTED_CHECKS);
  });
});

describe("the comparison catches a schema the migrations do not follow", () => {
  it("a field added without a migration", () => {
    const diff = diffFor(
      alteredSchema(
        "  chargeId       String?\n",
        "  chargeId       String?\n  note           String?\n",
      ),
    );
    expect(diff).toEqual(["column Order.note: in schema.prisma, missing from the migrations"]);
  });

  it("a model added without a migration", () => {
    const diff = diffFor(`${schema}\nmodel Coupon {\n  code String @id\n}\n`);
    expect(diff).toEqual([
      "table Coupon: in schema.prisma, missing from the migrations",
      "index Coupon_pkey: in schema.prisma, missing from the migrations",
    ]);
  });

  it("a field removed from the schema but still in the database", () => {
    const diff = diffFor(alteredSchema("  userAgent String?  @db.VarChar(200)\n", ""));
    expect(diff).toEqual([
      "column Session.userAgent: created by the migrations, not in schema.prisma",
    ]);
  });

  it.each([
    {
      what: "a required field made optional",
      from: "  currency       String\n  // The checkout's",
      to: "  currency       String?\n  // The checkout's",
      found: "column Order.currency: nullable is true in schema.prisma, false in the database",
    },
    {
      what: "a type narrowed",
      from: "key                 String            @db.VarChar(255)",
      to: "key                 String            @db.VarChar(128)",
      found:
        'column IdempotencyKey.key: type is "character varying(128)" in schema.prisma, "character varying(255)" in the database',
    },
    {
      what: "a default changed",
      from: 'currency    String   @default("EUR")',
      to: 'currency    String   @default("USD")',
      found: `column Product.currency: default is "'USD'::text" in schema.prisma, "'EUR'::text" in the database`,
    },
  ])("$what", ({ from, to, found }) => {
    expect(diffFor(alteredSchema(from, to))).toEqual([found]);
  });

  it("an enum value added", () => {
    const diff = diffFor(alteredSchema("  PAYMENT_FAILED\n", "  PAYMENT_FAILED\n  REFUNDED\n"));
    expect(diff).toEqual([
      'enum OrderStatus: schema has ["PENDING","PAID","PAYMENT_FAILED","REFUNDED"], database has ["PENDING","PAID","PAYMENT_FAILED"]',
    ]);
  });

  it("an index added, and an index's sort order changed", () => {
    expect(
      diffFor(
        alteredSchema("  @@index([orderId])\n", "  @@index([orderId])\n  @@index([productId])\n"),
      ),
    ).toEqual(["index OrderItem_productId_idx: in schema.prisma, missing from the migrations"]);
    const diff = diffFor(
      alteredSchema("@@index([tenantId, createdAt(sort: Desc)])", "@@index([tenantId, createdAt])"),
    );
    expect(diff).toHaveLength(1);
    expect(diff[0]).toMatch(
      /^index Order_tenantId_createdAt_idx: schema.prisma wants .*"createdAt"\].*database has .*"createdAt DESC"/,
    );
  });

  it("a unique constraint dropped from the schema", () => {
    const diff = diffFor(alteredSchema("  @@unique([scope, key])\n", ""));
    expect(diff).toEqual([
      "index IdempotencyKey_scope_key_key: created by the migrations, not in schema.prisma",
    ]);
  });

  it("a relation's delete rule changed", () => {
    const diff = diffFor(
      alteredSchema(
        "@relation(fields: [userId], references: [id], onDelete: Cascade)",
        "@relation(fields: [userId], references: [id])",
      ),
    );
    expect(diff).toEqual([
      'foreign key ApiToken_userId_fkey: schema.prisma wants {"table":"ApiToken","columns":["userId"],"references":"User","referencedColumns":["id"],"onDelete":"RESTRICT","onUpdate":"CASCADE"}, database has {"table":"ApiToken","columns":["userId"],"references":"User","referencedColumns":["id"],"onDelete":"CASCADE","onUpdate":"CASCADE"}',
    ]);
  });

  it("a column the migrations add behind the schema's back", async () => {
    await client.query(`ALTER TABLE "Tenant" ADD COLUMN "plan" TEXT`);
    try {
      expect(
        diffCatalogs(expectedCatalog(getDatamodel(schema)), await readCatalog(client)),
      ).toEqual(["column Tenant.plan: created by the migrations, not in schema.prisma"]);
    } finally {
      await client.query(`ALTER TABLE "Tenant" DROP COLUMN "plan"`);
    }
  });
});

describe("reading schema.prisma with Prisma's parser", () => {
  it("refuses an invalid schema with Prisma's own message", () => {
    expect(() =>
      getDatamodel(alteredSchema("  name      String\n", "  name      Strin\n")),
    ).toThrow(/schema.prisma is invalid:[\s\S]*Type "Strin" is neither a built-in type/);
  });

  // A schema using what ours does not (yet): each mapping is checked against the SQL Prisma Migrate
  // writes for it, applied to a real database.
  const THING_SCHEMA = `
datasource db {
  provider = "postgresql"
}
enum Colour {
  RED
  GREEN @map("green")
  @@map("colour")
}
model Thing {
  id      Int      @id @default(autoincrement())
  ref     String   @default(uuid()) @map("reference")
  flag    Boolean  @default(false)
  ratio   Float
  amount  Decimal
  blob    Bytes?
  at      DateTime
  colour  Colour   @default(RED)
  tags    String[]
  ownerId Int?
  owner   Owner?   @relation(fields: [ownerId], references: [id])
  @@unique([ref, at], map: "thing_ref_at")
  @@map("things")
}
model Owner {
  id     Int     @id
  things Thing[]
}
`;
  const THING_SQL = `
CREATE TYPE "colour" AS ENUM ('RED', 'green');
CREATE TABLE "things" (
    "id" SERIAL NOT NULL,
    "reference" TEXT NOT NULL,
    "flag" BOOLEAN NOT NULL DEFAULT false,
    "ratio" DOUBLE PRECISION NOT NULL,
    "amount" DECIMAL(65,30) NOT NULL,
    "blob" BYTEA,
    "at" TIMESTAMP(3) NOT NULL,
    "colour" "colour" NOT NULL DEFAULT 'RED',
    "tags" TEXT[],
    "ownerId" INTEGER,
    CONSTRAINT "things_pkey" PRIMARY KEY ("id")
);
CREATE TABLE "Owner" ("id" INTEGER NOT NULL, CONSTRAINT "Owner_pkey" PRIMARY KEY ("id"));
CREATE UNIQUE INDEX "thing_ref_at" ON "things"("reference", "at");
ALTER TABLE "things" ADD CONSTRAINT "things_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "Owner"("id") ON DELETE SET NULL ON UPDATE CASCADE;
`;

  it("maps types, defaults, @map/@@map and explicit index names as Prisma Migrate would", async () => {
    const catalog = expectedCatalog(getDatamodel(THING_SCHEMA));
    expect(catalog.enums).toEqual({ colour: ["RED", "green"] });
    expect(catalog.tables["things"]).toEqual({
      id: { type: "integer", nullable: false, default: `nextval('things_id_seq'::regclass)` },
      reference: { type: "text", nullable: false, default: null },
      flag: { type: "boolean", nullable: false, default: "false" },
      ratio: { type: "double precision", nullable: false, default: null },
      amount: { type: "numeric(65,30)", nullable: false, default: null },
      blob: { type: "bytea", nullable: true, default: null },
      at: { type: "timestamp(3) without time zone", nullable: false, default: null },
      colour: { type: "colour", nullable: false, default: "'RED'::colour" },
      tags: { type: "text[]", nullable: true, default: null },
      ownerId: { type: "integer", nullable: true, default: null },
    });
    expect(catalog.indexes).toEqual({
      things_pkey: {
        table: "things",
        columns: ["id"],
        unique: true,
        primary: true,
        method: "btree",
      },
      thing_ref_at: {
        table: "things",
        columns: ["reference", "at"],
        unique: true,
        primary: false,
        method: "btree",
      },
      Owner_pkey: { table: "Owner", columns: ["id"], unique: true, primary: true, method: "btree" },
    });
    expect(catalog.foreignKeys).toEqual({
      things_ownerId_fkey: {
        table: "things",
        columns: ["ownerId"],
        references: "Owner",
        referencedColumns: ["id"],
        onDelete: "SET NULL",
        onUpdate: "CASCADE",
      },
    });

    const scratch = `once_schema_${randomBytes(6).toString("hex")}`;
    await admin.query(`CREATE DATABASE "${scratch}"`);
    const other = new pg.Client({
      connectionString: inject("pgAdminUrl").replace(/\/postgres$/, `/${scratch}`),
    });
    try {
      await other.connect();
      await other.query(THING_SQL);
      expect(diffCatalogs(catalog, await readCatalog(other))).toEqual([]);
    } finally {
      await other.end();
      await admin.query(`DROP DATABASE IF EXISTS "${scratch}" WITH (FORCE)`);
    }
  });

  it("truncates default names to PostgreSQL's 63 characters the way Prisma does", () => {
    expect(defaultConstraintName("Order", ["tenantId", "createdAt"], "idx")).toBe(
      "Order_tenantId_createdAt_idx",
    );
    expect(defaultConstraintName("Order", [], "pkey")).toBe("Order_pkey");
    const long = defaultConstraintName("A".repeat(40), ["b".repeat(40)], "key");
    expect(long).toHaveLength(63);
    expect(long.endsWith("_key")).toBe(true);
  });
});
