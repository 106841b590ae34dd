// A PostgreSQL of a test file's own, with the engine's table and the stand-in business table, for
// tests that stop or crash the server without disturbing the other files.
import { readFile } from "node:fs/promises";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { connect, type Db } from "./database";
import { startTestServer, type TestServer } from "./postgres";

export const EFFECTS_SQL = `CREATE TABLE "TestEffect" (
  "id" SERIAL PRIMARY KEY, "scope" TEXT NOT NULL, "value" TEXT NOT NULL, "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT now());
CREATE TABLE "TestSlug" ("id" SERIAL PRIMARY KEY, "scope" TEXT NOT NULL, "slug" TEXT NOT NULL);
CREATE UNIQUE INDEX "TestSlug_scope_slug_key" ON "TestSlug" ("scope", "slug")`;

export async function startOwnServer(
  prefix: string,
  poolMax: number,
): Promise<{ server: TestServer; db: Db }> {
  const server = await startTestServer(prefix);
  const admin = new pg.Client({ connectionString: server.url("postgres") });
  await admin.connect();
  await admin.query(await readFile(new URL("../../sql/migration.sql", import.meta.url), "utf8"));
  await admin.query(EFFECTS_SQL);
  await admin.end();
  return { server, db: connect(server.url("postgres"), poolMax).db };
}

/**
 * In a test file: its own server for the file's life (`own.server`, `own.db` inside tests), shut
 * down after the file's own afterAll hooks (they run in reverse order).
 */
export function useOwnServer(
  prefix: string,
  poolMax: number,
): { readonly server: TestServer; readonly db: Db } {
  const own = {} as { server?: TestServer; db?: Db };
  beforeAll(async () => {
    Object.assign(own, await startOwnServer(prefix, poolMax));
  }, 60_000);
  afterAll(async () => {
    await own.db?.$disconnect();
    await own.server?.destroy();
  });
  return own as { server: TestServer; db: Db };
}
