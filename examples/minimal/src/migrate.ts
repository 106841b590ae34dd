// Applies the engine's SQL (shipped in the package) and then the example's own migrations, each
// once, recorded in a small table.
import { readdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import pg from "pg";

function engineSql(): string {
  const packageJson = createRequire(import.meta.url).resolve("@once/idempotency/package.json");
  return path.join(path.dirname(packageJson), "sql", "migration.sql");
}

export async function migrate(databaseUrl: string): Promise<void> {
  const own = path.join(import.meta.dirname, "..", "prisma", "migrations");
  const steps = [
    { name: "0000_idempotency", file: engineSql() },
    ...(await readdir(own))
      .sort()
      .map((name) => ({ name, file: path.join(own, name, "migration.sql") })),
  ];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS "_migrations" ("name" TEXT PRIMARY KEY)`);
    for (const step of steps) {
      const { rowCount } = await client.query(`SELECT 1 FROM "_migrations" WHERE "name" = $1`, [
        step.name,
      ]);
      if (rowCount) continue;
      await client.query("BEGIN");
      await client.query(await readFile(step.file, "utf8"));
      await client.query(`INSERT INTO "_migrations" ("name") VALUES ($1)`, [step.name]);
      await client.query("COMMIT");
    }
  } finally {
    await client.end();
  }
}
