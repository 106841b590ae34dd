// What `schema.prisma` means to PostgreSQL, and what a migrated database really holds, as two
// comparable catalogs. Prisma's migrate engine (which would answer "does the SQL equal the schema?"
// with `prisma migrate diff`) cannot be installed offline, so
// tools/db/schema-matches-migrations.test.ts does the same comparison itself:
//
//   schema.prisma --(Prisma's own WebAssembly parser: get_dmmf)--> DMMF --> expected catalog
//   migrated DB   --(pg_catalog)-----------------------------------------> actual catalog
//
// We do not parse the schema ourselves: `prisma_schema_build_bg.wasm` ships inside the `prisma`
// CLI package and is what `prisma generate` runs. Its JS glue is bundled into the CLI, so we call
// the four functions we need through a minimal wasm-bindgen shim below.
//
// The expected catalog follows Prisma Migrate's PostgreSQL conventions: default constraint names
// (`{table}_pkey`, `_key`, `_idx`, `_fkey`), `TIMESTAMP(3)` for DateTime, `JSONB` for Json, lists
// as nullable arrays, `now()` as `CURRENT_TIMESTAMP`, optional relations `ON DELETE SET NULL` and
// required ones `RESTRICT`, `ON UPDATE CASCADE`. A type or default we do not map throws: extend the
// mapping rather than let a difference slip through.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type pg from "pg";

// ---------------------------------------------------------------------------------------------
// 1. Prisma's schema parser (WebAssembly)

interface SchemaWasm {
  memory: WebAssembly.Memory;
  __wbindgen_externrefs: WebAssembly.Table;
  __wbindgen_malloc: (size: number, align: number) => number;
  __wbindgen_free: (ptr: number, size: number, align: number) => void;
  __externref_table_dealloc: (index: number) => void;
  __wbindgen_start: () => void;
  get_dmmf: (ptr: number, len: number) => [number, number, number, number];
}

let wasm: SchemaWasm | undefined;

function schemaWasm(): SchemaWasm {
  if (wasm) return wasm;
  const prismaDir = path.dirname(createRequire(import.meta.url).resolve("prisma/package.json"));
  const bytes = readFileSync(path.join(prismaDir, "build", "prisma_schema_build_bg.wasm"));
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let exports!: SchemaWasm;
  const text = (ptr: number, len: number) =>
    decoder.decode(new Uint8Array(exports.memory.buffer, ptr >>> 0, len));
  let panicMessage: string | undefined;
  // The imports the module declares; names are fixed by the wasm-bindgen build of this version.
  const shim = {
    __wbg_set_message_f22ac4a6869ee695: (ptr: number, len: number) => {
      panicMessage = text(ptr, len);
    },
    __wbg_Error_e83987f665cf5504: (ptr: number, len: number) => new Error(text(ptr, len)),
    __wbg___wbindgen_throw_b855445ff6a94295: (ptr: number, len: number) => {
      throw new Error(text(ptr, len));
    },
    __wbindgen_init_externref_table: () => {
      const table = exports.__wbindgen_externrefs;
      const offset = table.grow(4);
      table.set(0, undefined);
      table.set(offset + 0, undefined);
      table.set(offset + 1, null);
      table.set(offset + 2, true);
      table.set(offset + 3, false);
    },
  };
  const module = new WebAssembly.Module(bytes);
  const missing = WebAssembly.Module.imports(module).filter((i) => !(i.name in shim));
  if (missing.length) {
    throw new Error(
      `prisma_schema_build_bg.wasm changed (imports ${missing.map((i) => i.name).join(", ")}): update the shim in prisma-schema.ts`,
    );
  }
  try {
    exports = new WebAssembly.Instance(module, { __wbindgen_placeholder__: shim })
      .exports as unknown as SchemaWasm;
    exports.__wbindgen_start();
  } catch (error) {
    throw new Error(
      `cannot start Prisma's schema WebAssembly${panicMessage ? `: ${panicMessage}` : ""}`,
      { cause: error },
    );
  }
  wasm = exports;
  return exports;
}

function callGetDmmf(params: string): string {
  const w = schemaWasm();
  const input = new TextEncoder().encode(params);
  const ptr = w.__wbindgen_malloc(input.length, 1) >>> 0;
  new Uint8Array(w.memory.buffer, ptr, input.length).set(input);
  const [outPtr, outLen, errIndex, isErr] = w.get_dmmf(ptr, input.length);
  if (isErr) {
    const error = w.__wbindgen_externrefs.get(errIndex) as Error;
    w.__externref_table_dealloc(errIndex);
    throw error;
  }
  try {
    return new TextDecoder().decode(new Uint8Array(w.memory.buffer, outPtr >>> 0, outLen));
  } finally {
    w.__wbindgen_free(outPtr, outLen, 1);
  }
}

export interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "enum" | "object" | "unsupported";
  type: string;
  nativeType?: [string, string[]] | null;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUnique: boolean;
  hasDefaultValue: boolean;
  default?: unknown;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
}

export interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  dbName?: string | null;
  algorithm?: string;
  fields: { name: string; sortOrder?: "asc" | "desc" }[];
}

export interface Datamodel {
  enums: {
    name: string;
    dbName: string | null;
    values: { name: string; dbName: string | null }[];
  }[];
  models: DmmfModel[];
  indexes: DmmfIndex[];
}

/**
 * Parses and validates a schema with Prisma's own parser; throws Prisma's message (P1012) if
 * invalid.
 */
export function getDatamodel(schema: string): Datamodel {
  let json: string;
  try {
    json = callGetDmmf(
      JSON.stringify({ prismaSchema: [["schema.prisma", schema]], noColor: true }),
    );
  } catch (error) {
    const raw = error instanceof Error ? error.message : String(error);
    let message = raw;
    try {
      message = (JSON.parse(raw) as { message?: string }).message ?? raw;
    } catch {
      // not JSON: keep the raw message
    }
    throw new Error(`schema.prisma is invalid:\n${message}`, { cause: error });
  }
  return (JSON.parse(json) as { datamodel: Datamodel }).datamodel;
}

// ---------------------------------------------------------------------------------------------
// 2. The catalog: one shape for both sides, so a difference is a plain key-by-key comparison.

export interface Column {
  /** As PostgreSQL's format_type() prints it: `text`, `timestamp(3) with time zone`, `"Role"[]`. */
  type: string;
  nullable: boolean;
  /** As pg_get_expr() prints the default: `CURRENT_TIMESTAMP`, `'EUR'::text`; null for none. */
  default: string | null;
}

export interface Index {
  table: string;
  /** Column names, each followed by ` DESC` when descending. */
  columns: string[];
  unique: boolean;
  primary: boolean;
  method: string;
}

export interface ForeignKey {
  table: string;
  columns: string[];
  references: string;
  referencedColumns: string[];
  onDelete: string;
  onUpdate: string;
}

export interface Catalog {
  enums: Record<string, string[]>;
  tables: Record<string, Record<string, Column>>;
  indexes: Record<string, Index>;
  foreignKeys: Record<string, ForeignKey>;
}

// ---------------------------------------------------------------------------------------------
// 3. The catalog schema.prisma asks for.

/** PostgreSQL's identifier limit; Prisma truncates default constraint names to fit it. */
const MAX_IDENTIFIER_LENGTH = 63;

/** Prisma's default constraint name: `{table}_{columns}_{suffix}`, truncated to fit 63 bytes. */
export function defaultConstraintName(
  table: string,
  columns: string[],
  suffix: "pkey" | "key" | "idx" | "fkey",
): string {
  const base = suffix === "pkey" ? table : [table, ...columns].join("_");
  const limit = MAX_IDENTIFIER_LENGTH - suffix.length - 1;
  return `${base.length > limit ? base.slice(0, limit) : base}_${suffix}`;
}

/** format_type() quotes identifiers that are not all lower case (what quote_ident does). */
function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
}

function columnType(field: DmmfField, enumDbName: (name: string) => string): string {
  let base: string;
  if (field.kind === "enum") {
    base = quoteIdent(enumDbName(field.type));
  } else if (field.nativeType) {
    const [name, args] = field.nativeType;
    const p = args.length ? `(${args.join(",")})` : "";
    const native: Record<string, string> = {
      Text: "text",
      Uuid: "uuid",
      VarChar: `character varying${p}`,
      Char: `character${p}`,
      Timestamptz: `timestamp${p} with time zone`,
      Timestamp: `timestamp${p} without time zone`,
      Date: "date",
      Integer: "integer",
      SmallInt: "smallint",
      BigInt: "bigint",
      Decimal: `numeric${p}`,
      DoublePrecision: "double precision",
      Real: "real",
      Boolean: "boolean",
      JsonB: "jsonb",
      Json: "json",
      ByteA: "bytea",
      Inet: "inet",
    };
    const mapped = native[name];
    if (!mapped)
      throw new Error(
        `prisma-schema.ts: no mapping for @db.${name} (field ${field.name}): add one`,
      );
    base = mapped;
  } else {
    const scalar: Record<string, string> = {
      String: "text",
      Int: "integer",
      BigInt: "bigint",
      Float: "double precision",
      Decimal: "numeric(65,30)",
      Boolean: "boolean",
      DateTime: "timestamp(3) without time zone",
      Json: "jsonb",
      Bytes: "bytea",
    };
    const mapped = scalar[field.type];
    if (!mapped)
      throw new Error(
        `prisma-schema.ts: no mapping for type ${field.type} (field ${field.name}): add one`,
      );
    base = mapped;
  }
  return field.isList ? `${base}[]` : base;
}

function sqlString(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * The default PostgreSQL stores for a field, or null when Prisma sets it client-side (uuid(),
 * cuid()) or not at all.
 */
function columnDefault(
  field: DmmfField,
  type: string,
  table: string,
  column: string,
): string | null {
  if (!field.hasDefaultValue || field.default === undefined) return null;
  const d = field.default;
  if (field.isList)
    throw new Error(
      `prisma-schema.ts: list defaults are not mapped (field ${field.name}): add one`,
    );
  if (typeof d === "object" && d !== null && "name" in d) {
    const fn = d as { name: string; args: unknown[] };
    switch (fn.name) {
      case "now":
        return "CURRENT_TIMESTAMP";
      case "dbgenerated":
        return String(fn.args[0]);
      case "autoincrement":
        return `nextval(${sqlString(`${quoteIdent(`${table}_${column}_seq`)}`)}::regclass)`;
      case "uuid":
      case "cuid":
      case "nanoid":
      case "ulid":
        return null; // generated by the client, not the database
      default:
        throw new Error(
          `prisma-schema.ts: no mapping for @default(${fn.name}()) (field ${field.name}): add one`,
        );
    }
  }
  if (field.kind === "enum") return `${sqlString(String(d))}::${type}`;
  switch (field.type) {
    case "String":
      return `${sqlString(String(d))}::${type}`;
    case "Int":
    case "BigInt":
    case "Float":
    case "Decimal":
      return String(d);
    case "Boolean":
      return String(d);
    default:
      throw new Error(
        `prisma-schema.ts: no mapping for a ${field.type} default (field ${field.name}): add one`,
      );
  }
}

const REFERENTIAL_ACTIONS: Record<string, string> = {
  Cascade: "CASCADE",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetNull: "SET NULL",
  SetDefault: "SET DEFAULT",
};

export function expectedCatalog(datamodel: Datamodel): Catalog {
  const catalog: Catalog = { enums: {}, tables: {}, indexes: {}, foreignKeys: {} };
  const enumDbNames = new Map(datamodel.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const enumDbName = (name: string) => enumDbNames.get(name) ?? name;
  for (const e of datamodel.enums)
    catalog.enums[enumDbName(e.name)] = e.values.map((v) => v.dbName ?? v.name);

  const models = new Map(datamodel.models.map((m) => [m.name, m]));
  const tableOf = (m: DmmfModel) => m.dbName ?? m.name;
  const columnOf = (m: DmmfModel, fieldName: string) => {
    const field = m.fields.find((f) => f.name === fieldName);
    if (!field) throw new Error(`prisma-schema.ts: ${m.name} has no field ${fieldName}`);
    return field.dbName ?? field.name;
  };

  for (const model of datamodel.models) {
    const table = tableOf(model);
    const columns: Record<string, Column> = {};
    for (const field of model.fields) {
      if (field.kind === "object") continue;
      if (field.kind === "unsupported")
        throw new Error(
          `prisma-schema.ts: Unsupported() fields are not mapped (${model.name}.${field.name})`,
        );
      const column = field.dbName ?? field.name;
      const type = columnType(field, enumDbName);
      // Prisma never puts NOT NULL on a list column.
      columns[column] = {
        type,
        nullable: field.isList || !field.isRequired,
        default: columnDefault(field, type, table, column),
      };
    }
    catalog.tables[table] = columns;

    for (const field of model.fields) {
      if (field.kind !== "object" || !field.relationFromFields?.length) continue;
      const target = models.get(field.type);
      if (!target)
        throw new Error(
          `prisma-schema.ts: ${model.name}.${field.name} points at unknown model ${field.type}`,
        );
      const fkColumns = field.relationFromFields.map((f) => columnOf(model, f));
      // Prisma's defaults: an optional relation sets null on delete, a required one restricts.
      const onDelete = field.relationOnDelete ?? (field.isRequired ? "Restrict" : "SetNull");
      const onUpdate = field.relationOnUpdate ?? "Cascade";
      catalog.foreignKeys[defaultConstraintName(table, fkColumns, "fkey")] = {
        table,
        columns: fkColumns,
        references: tableOf(target),
        referencedColumns: (field.relationToFields ?? []).map((f) => columnOf(target, f)),
        onDelete: REFERENTIAL_ACTIONS[onDelete] ?? onDelete,
        onUpdate: REFERENTIAL_ACTIONS[onUpdate] ?? onUpdate,
      };
    }
  }

  for (const index of datamodel.indexes) {
    const model = models.get(index.model);
    if (!model) throw new Error(`prisma-schema.ts: index on unknown model ${index.model}`);
    if (index.type === "fulltext")
      throw new Error(`prisma-schema.ts: fulltext indexes are not mapped (${index.model})`);
    const table = tableOf(model);
    const names = index.fields.map((f) => columnOf(model, f.name));
    const suffix = index.type === "id" ? "pkey" : index.type === "unique" ? "key" : "idx";
    catalog.indexes[index.dbName ?? defaultConstraintName(table, names, suffix)] = {
      table,
      columns: index.fields.map((f, i) =>
        f.sortOrder === "desc" ? `${names[i]} DESC` : names[i]!,
      ),
      unique: index.type !== "normal",
      primary: index.type === "id",
      method: (index.algorithm ?? "BTree").toLowerCase(),
    };
  }
  return catalog;
}

// ---------------------------------------------------------------------------------------------
// 4. The catalog a database holds (schema `public`, without Prisma's own `_prisma_migrations`).

const MIGRATIONS_TABLE = "_prisma_migrations";

const FK_ACTIONS: Record<string, string> = {
  a: "NO ACTION",
  r: "RESTRICT",
  c: "CASCADE",
  n: "SET NULL",
  d: "SET DEFAULT",
};

export async function readCatalog(client: pg.ClientBase): Promise<Catalog> {
  const catalog: Catalog = { enums: {}, tables: {}, indexes: {}, foreignKeys: {} };

  const enums = await client.query<{ name: string; labels: string[] }>(`
    SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS labels
    FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE n.nspname = 'public' GROUP BY t.typname`);
  for (const e of enums.rows) catalog.enums[e.name] = e.labels;

  const tables = await client.query<{ name: string }>(
    `
    SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> $1`,
    [MIGRATIONS_TABLE],
  );
  for (const t of tables.rows) catalog.tables[t.name] = {};

  const columns = await client.query<{
    table: string;
    column: string;
    type: string;
    notnull: boolean;
    default: string | null;
  }>(
    `
    SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
           a.attnotnull AS notnull, pg_get_expr(d.adbin, d.adrelid) AS default
    FROM pg_attribute a
    JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> $1 AND a.attnum > 0 AND NOT a.attisdropped
    ORDER BY c.relname, a.attnum`,
    [MIGRATIONS_TABLE],
  );
  for (const c of columns.rows) {
    catalog.tables[c.table]![c.column] = { type: c.type, nullable: !c.notnull, default: c.default };
  }

  const indexes = await client.query<{
    name: string;
    table: string;
    columns: string[];
    unique: boolean;
    primary: boolean;
    method: string;
    partial: boolean;
  }>(
    `
    SELECT ic.relname AS name, tc.relname AS table, i.indisunique AS unique, i.indisprimary AS primary,
           am.amname AS method, i.indpred IS NOT NULL AS partial,
           ARRAY(
             SELECT CASE WHEN k.attnum = 0 THEN pg_get_indexdef(i.indexrelid, k.ord::int, true)
                         ELSE a.attname::text END
                    || CASE WHEN (i.indoption[k.ord - 1] & 1) = 1 THEN ' DESC' ELSE '' END
             FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
             LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
             WHERE k.ord <= i.indnkeyatts
             ORDER BY k.ord
           )::text[] AS columns
    FROM pg_index i
    JOIN pg_class ic ON ic.oid = i.indexrelid JOIN pg_class tc ON tc.oid = i.indrelid
    JOIN pg_namespace n ON n.oid = tc.relnamespace JOIN pg_am am ON am.oid = ic.relam
    WHERE n.nspname = 'public' AND tc.relname <> $1`,
    [MIGRATIONS_TABLE],
  );
  for (const i of indexes.rows) {
    // Prisma never writes a partial index: mark one so it can never equal an expected index.
    const method = i.partial ? `${i.method} (partial)` : i.method;
    catalog.indexes[i.name] = {
      table: i.table,
      columns: i.columns,
      unique: i.unique,
      primary: i.primary,
      method,
    };
  }

  const fks = await client.query<{
    name: string;
    table: string;
    columns: string[];
    references: string;
    referencedColumns: string[];
    ondelete: string;
    onupdate: string;
  }>(`
    SELECT con.conname AS name, tc.relname AS table, rc.relname AS references,
           ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns,
           ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                 JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS "referencedColumns",
           con.confdeltype AS ondelete, con.confupdtype AS onupdate
    FROM pg_constraint con
    JOIN pg_class tc ON tc.oid = con.conrelid JOIN pg_class rc ON rc.oid = con.confrelid
    JOIN pg_namespace n ON n.oid = con.connamespace
    WHERE n.nspname = 'public' AND con.contype = 'f'`);
  for (const f of fks.rows) {
    catalog.foreignKeys[f.name] = {
      table: f.table,
      columns: f.columns,
      references: f.references,
      referencedColumns: f.referencedColumns,
      onDelete: FK_ACTIONS[f.ondelete] ?? f.ondelete,
      onUpdate: FK_ACTIONS[f.onupdate] ?? f.onupdate,
    };
  }
  return catalog;
}

/**
 * CHECK constraints in `public`, by name: schema.prisma cannot express them, so tests list the
 * expected ones by hand.
 */
export async function readCheckConstraints(client: pg.ClientBase): Promise<Record<string, string>> {
  const { rows } = await client.query<{ name: string; table: string; def: string }>(
    `
    SELECT con.conname AS name, c.relname AS table, pg_get_constraintdef(con.oid, true) AS def
    FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = con.connamespace
    WHERE n.nspname = 'public' AND con.contype = 'c' AND c.relname <> $1`,
    [MIGRATIONS_TABLE],
  );
  return Object.fromEntries(rows.map((r) => [`${r.table}.${r.name}`, r.def]));
}

// ---------------------------------------------------------------------------------------------
// 5. The difference, in words a person can act on. Empty means equal.

export function diffCatalogs(expected: Catalog, actual: Catalog): string[] {
  const out: string[] = [];
  const show = (v: unknown) => JSON.stringify(v);
  const compareKeys = <T>(
    label: (name: string) => string,
    exp: Record<string, T>,
    act: Record<string, T>,
    each: (name: string, e: T, a: T) => void,
  ) => {
    for (const name of Object.keys(exp).sort()) {
      if (!(name in act)) out.push(`${label(name)}: in schema.prisma, missing from the migrations`);
      else each(name, exp[name]!, act[name]!);
    }
    for (const name of Object.keys(act).sort()) {
      if (!(name in exp))
        out.push(`${label(name)}: created by the migrations, not in schema.prisma`);
    }
  };

  /** Each pair equal as JSON, or one line that `says` how (given both sides as JSON). */
  const sameJson =
    (says: (name: string, e: string, a: string) => string) =>
    (name: string, e: unknown, a: unknown) => {
      if (show(e) !== show(a)) out.push(says(name, show(e), show(a)));
    };

  compareKeys(
    (n) => `enum ${n}`,
    expected.enums,
    actual.enums,
    sameJson((name, e, a) => `enum ${name}: schema has ${e}, database has ${a}`),
  );
  compareKeys(
    (n) => `table ${n}`,
    expected.tables,
    actual.tables,
    (table, e, a) => {
      compareKeys(
        (n) => `column ${table}.${n}`,
        e,
        a,
        (column, ec, ac) => {
          for (const prop of ["type", "nullable", "default"] as const) {
            if (ec[prop] !== ac[prop])
              out.push(
                `column ${table}.${column}: ${prop} is ${show(ec[prop])} in schema.prisma, ${show(ac[prop])} in the database`,
              );
          }
        },
      );
    },
  );
  compareKeys(
    (n) => `index ${n}`,
    expected.indexes,
    actual.indexes,
    sameJson((name, e, a) => `index ${name}: schema.prisma wants ${e}, database has ${a}`),
  );
  compareKeys(
    (n) => `foreign key ${n}`,
    expected.foreignKeys,
    actual.foreignKeys,
    sameJson((name, e, a) => `foreign key ${name}: schema.prisma wants ${e}, database has ${a}`),
  );
  return out;
}
