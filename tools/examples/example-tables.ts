// The tables an example app's tests run on: the engine's SQL as the example installed it (the
// packed tarball's sql/migration.sql, resolved from the example's folder), then the example's own.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";

/** The engine's SQL as `app` installed it, then `ownSql` (the tables of the example's models). */
export async function createExampleTables(
  app: string,
  databaseUrl: string,
  ownSql: string,
): Promise<void> {
  const installed = createRequire(path.join(app, "package.json"));
  const engineSql = path.join(
    path.dirname(installed.resolve("@once/idempotency/package.json")),
    "sql",
    "migration.sql",
  );
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(await readFile(engineSql, "utf8"));
    await client.query(ownSql);
  } finally {
    await client.end();
  }
}
