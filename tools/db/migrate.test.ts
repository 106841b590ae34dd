// The offline migration runner: applies prisma/migrations in order on an empty database and keeps
// `_prisma_migrations` exactly as Prisma Migrate would, so `prisma migrate deploy` on a machine
// with the native engine sees the same history.
import { createHash } from "node:crypto";
import { cp, mkdtemp, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import { createEmptyDatabase } from "../../src/test/database";
import { migrate, MIGRATIONS_DIR, readMigrations } from "./migrate";

/** The project's migrations, in order: the tests hold for however many there are. */
let PROJECT: string[] = [];
let admin: pg.Client;
const created: string[] = [];
const clients: pg.Client[] = [];
const tempDirs: string[] = [];

beforeAll(async () => {
  PROJECT = (await readMigrations()).map((m) => m.name);
  admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.end()));
  await Promise.all(tempDirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

afterAll(async () => {
  for (const name of created) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

/** A new, empty database (not the migrated template). */
async function emptyDatabase(): Promise<{ url: string; client: pg.Client }> {
  const { name, url } = await createEmptyDatabase(admin, "once_migrate");
  created.push(name);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return { url, client };
}

/** A new migration `name` in the migrations folder `dir`. */
async function addMigration(dir: string, name: string, sql: string): Promise<void> {
  await mkdir(path.join(dir, name));
  await writeFile(path.join(dir, name, "migration.sql"), sql);
}

/** A copy of the project's migrations folder the test may edit. */
async function migrationsCopy(): Promise<string> {
  const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "once-migrations-")), "migrations");
  await cp(MIGRATIONS_DIR, dir, { recursive: true });
  tempDirs.push(path.dirname(dir));
  return dir;
}

async function history(client: pg.Client) {
  const { rows } = await client.query<{
    migration_name: string;
    checksum: string;
    finished_at: Date | null;
    applied_steps_count: number;
    rolled_back_at: Date | null;
    logs: string | null;
  }>(
    `SELECT migration_name, checksum, finished_at, applied_steps_count, rolled_back_at, logs FROM "_prisma_migrations" ORDER BY started_at, migration_name`,
  );
  return rows;
}

async function tables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
  );
  return rows.map((r) => r.name);
}

describe("on an empty database", () => {
  it("applies every migration in order and records each with Prisma's checksum (SHA-256 of the file's bytes)", async () => {
    const { url, client } = await emptyDatabase();
    expect(PROJECT[0]).toBe("0001_init");
    expect(await migrate(url)).toEqual(PROJECT);

    const rows = await history(client);
    expect(rows.map((r) => r.migration_name)).toEqual(PROJECT);
    for (const row of rows) {
      const file = await readFile(path.join(MIGRATIONS_DIR, row.migration_name, "migration.sql"));
      expect(row).toMatchObject({
        checksum: createHash("sha256").update(file).digest("hex"),
        applied_steps_count: 1,
        rolled_back_at: null,
        logs: null,
      });
      expect(row.finished_at).toBeInstanceOf(Date);
    }
    expect(await tables(client)).toEqual(
      expect.arrayContaining(["_prisma_migrations", "IdempotencyKey", "Order", "Tenant"]),
    );
  });

  it("creates _prisma_migrations with Prisma Migrate's columns", async () => {
    const { url, client } = await emptyDatabase();
    await migrate(url);
    const { rows } = await client.query(
      `SELECT column_name, data_type, is_nullable, character_maximum_length FROM information_schema.columns
       WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(rows).toEqual([
      {
        column_name: "id",
        data_type: "character varying",
        is_nullable: "NO",
        character_maximum_length: 36,
      },
      {
        column_name: "checksum",
        data_type: "character varying",
        is_nullable: "NO",
        character_maximum_length: 64,
      },
      {
        column_name: "finished_at",
        data_type: "timestamp with time zone",
        is_nullable: "YES",
        character_maximum_length: null,
      },
      {
        column_name: "migration_name",
        data_type: "character varying",
        is_nullable: "NO",
        character_maximum_length: 255,
      },
      {
        column_name: "logs",
        data_type: "text",
        is_nullable: "YES",
        character_maximum_length: null,
      },
      {
        column_name: "rolled_back_at",
        data_type: "timestamp with time zone",
        is_nullable: "YES",
        character_maximum_length: null,
      },
      {
        column_name: "started_at",
        data_type: "timestamp with time zone",
        is_nullable: "NO",
        character_maximum_length: null,
      },
      {
        column_name: "applied_steps_count",
        data_type: "integer",
        is_nullable: "NO",
        character_maximum_length: null,
      },
    ]);
  });
});

describe("on a migrated database", () => {
  it("a second run applies nothing and records nothing", async () => {
    const { url, client } = await emptyDatabase();
    await migrate(url);
    const before = await history(client);
    expect(await migrate(url)).toEqual([]);
    expect(await history(client)).toEqual(before);
  });

  it("applies only the migrations that are new, in name order", async () => {
    const { url, client } = await emptyDatabase();
    const dir = await migrationsCopy();
    await migrate(url, { dir });
    await addMigration(dir, "9003_c", `ALTER TABLE "Tenant" ADD COLUMN "c" TEXT;\n`);
    await addMigration(dir, "9002_b", `ALTER TABLE "Tenant" ADD COLUMN "b" TEXT;\n`);
    expect(await migrate(url, { dir })).toEqual(["9002_b", "9003_c"]);
    expect((await history(client)).map((r) => r.migration_name)).toEqual([
      ...PROJECT,
      "9002_b",
      "9003_c",
    ]);
  });

  it("refuses a migration edited after it was applied, with a message naming it, and changes nothing", async () => {
    const { url, client } = await emptyDatabase();
    const dir = await migrationsCopy();
    await migrate(url, { dir });
    const before = await history(client);
    const file = path.join(dir, "0001_init", "migration.sql");
    await writeFile(
      file,
      `${await readFile(file, "utf8")}\nALTER TABLE "Tenant" ADD COLUMN "sneaky" TEXT;\n`,
    );
    await addMigration(dir, "9002_next", `CREATE TABLE "Next" ("id" TEXT PRIMARY KEY);\n`);

    await expect(migrate(url, { dir })).rejects.toThrow(
      "migration 0001_init was edited after it was applied (checksum differs)",
    );
    expect(await history(client)).toEqual(before);
    expect(await tables(client)).not.toContain("Next");
  });

  it("refuses to go on after a migration that started but never finished", async () => {
    const { url, client } = await emptyDatabase();
    await migrate(url);
    await client.query(
      `UPDATE "_prisma_migrations" SET finished_at = NULL WHERE migration_name = '0001_init'`,
    );
    await expect(migrate(url)).rejects.toThrow(
      "migration 0001_init started but never finished: repair the database by hand",
    );
  });

  it("rolls a failing migration back whole and records nothing for it", async () => {
    const { url, client } = await emptyDatabase();
    const dir = await migrationsCopy();
    await migrate(url, { dir });
    await addMigration(
      dir,
      "9002_broken",
      `CREATE TABLE "Half" ("id" TEXT);\nALTER TABLE "Nope" ADD COLUMN "x" TEXT;\n`,
    );
    await expect(migrate(url, { dir })).rejects.toThrow(
      /^migration 9002_broken failed: relation "Nope" does not exist/,
    );
    expect(await tables(client)).not.toContain("Half");
    expect((await history(client)).map((r) => r.migration_name)).toEqual(PROJECT);
  });
});

describe("concurrent runs", () => {
  it("apply each migration once: one run applies, the others wait for it and find nothing to do", async () => {
    const { url, client } = await emptyDatabase();
    const results = await Promise.all(Array.from({ length: 5 }, () => migrate(url)));
    expect(results.filter((r) => r.length > 0)).toEqual([PROJECT]);
    expect(results.filter((r) => r.length === 0)).toHaveLength(4);
    expect((await history(client)).map((r) => r.migration_name)).toEqual(PROJECT);
  });

  it("hold Prisma Migrate's advisory lock while they work, so a Prisma run never interleaves", async () => {
    const { url, client } = await emptyDatabase();
    // Hold the lock as Prisma Migrate would, in another session; our runner must wait for it.
    await client.query("SELECT pg_advisory_lock(72707369)");
    let settled = false;
    const run = migrate(url).finally(() => {
      settled = true;
    });
    // The runner's session is waiting on the lock: PostgreSQL shows it, no timing involved.
    for (;;) {
      const { rows } = await client.query(
        `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = 72707369 AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      if (rows.length || settled) break;
    }
    expect(settled).toBe(false);
    expect(await tables(client)).toEqual([]);
    await client.query("SELECT pg_advisory_unlock(72707369)");
    expect(await run).toEqual(PROJECT);
  });
});

describe("reading migrations", () => {
  it("lists the project's migrations in Prisma's layout", async () => {
    const migrations = await readMigrations();
    expect(migrations.map((m) => m.name)).toEqual(PROJECT);
    expect(migrations.map((m) => m.name).every((name) => /^\d{4}_[a-z0-9_]+$/.test(name))).toBe(
      true,
    );
    expect(migrations[0]!.sql).toContain(`CREATE TABLE "IdempotencyKey"`);
  });
});
