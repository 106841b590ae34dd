// Applies prisma/migrations/<NNNN_name>/migration.sql in order and records each one in
// `_prisma_migrations` exactly as Prisma Migrate does (same table, columns and SHA-256 checksum),
// so `prisma migrate deploy` on a machine that has Prisma's native engine agrees with what ran
// here. We need our own runner because that engine cannot be installed offline.
import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";

export const MIGRATIONS_DIR = path.resolve(import.meta.dirname, "../../prisma/migrations");

// Prisma Migrate takes this advisory lock too, so our runner and Prisma's never interleave.
const PRISMA_MIGRATE_LOCK_ID = 72707369;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

export async function readMigrations(dir = MIGRATIONS_DIR): Promise<Migration[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: createHash("sha256").update(sql).digest("hex") };
    }),
  );
}

/**
 * Applies every pending migration in `dir` (the project's by default); returns the names it
 * applied.
 */
export async function migrate(
  databaseUrl: string,
  options: { dir?: string } = {},
): Promise<string[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_ID]);
    await client.query(CREATE_MIGRATIONS_TABLE);
    const { rows } = await client.query<{
      migration_name: string;
      checksum: string;
      finished_at: Date | null;
    }>(
      `SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL`,
    );
    const applied = new Map(rows.map((r) => [r.migration_name, r]));
    const done: string[] = [];
    for (const m of await readMigrations(options.dir)) {
      const previous = applied.get(m.name);
      if (previous) {
        if (!previous.finished_at) {
          throw new Error(
            `migration ${m.name} started but never finished: repair the database by hand`,
          );
        }
        if (previous.checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was edited after it was applied (checksum differs)`);
        }
        continue;
      }
      const id = randomUUID();
      await client.query("BEGIN");
      try {
        await client.query(m.sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, applied_steps_count)
           VALUES ($1, $2, now(), $3, 1)`,
          [id, m.checksum, m.name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`migration ${m.name} failed: ${(error as Error).message}`, {
          cause: error,
        });
      }
      done.push(m.name);
    }
    return done;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_ID]).catch(() => {});
    await client.end();
  }
}
