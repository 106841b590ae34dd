// `npm run db:setup` with DIRECT_DATABASE_URL: the migrations run through the direct URL, the seed
// through DATABASE_URL. Shown with the production layout that tells the two apart for real: the
// app's role may read and write rows but not create tables (PostgreSQL 15+ gives nobody but the
// owner CREATE on `public`), the migration role owns the schema.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createEmptyDatabase } from "../../src/test/database";
import { setupDatabase } from "./setup";

let admin: pg.Client;
const databases: string[] = [];
const role = `once_app_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  await admin.query(`CREATE ROLE "${role}" LOGIN PASSWORD 'app'`);
});

afterAll(async () => {
  for (const name of databases) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`DROP ROLE IF EXISTS "${role}"`);
  await admin.end();
});

/** An empty database whose future tables the app's role may use (rows only). */
async function productionLikeDatabase(): Promise<{ ownerUrl: string; appUrl: string }> {
  const { name, url: ownerUrl } = await createEmptyDatabase(admin, "once_setup");
  databases.push(name);
  const owner = new pg.Client({ connectionString: ownerUrl });
  await owner.connect();
  await owner.query(`GRANT USAGE ON SCHEMA public TO "${role}"`);
  await owner.query(
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO "${role}"`,
  );
  await owner.query(
    `ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO "${role}"`,
  );
  await owner.end();
  const app = new URL(ownerUrl);
  app.username = role;
  app.password = "app";
  return { ownerUrl, appUrl: app.toString() };
}

describe("db:setup with DIRECT_DATABASE_URL", () => {
  it("migrates through the direct URL and seeds through DATABASE_URL", async () => {
    const { ownerUrl, appUrl } = await productionLikeDatabase();
    await setupDatabase(appUrl, () => {}, { demo: false, directUrl: ownerUrl });
    const app = new pg.Client({ connectionString: appUrl });
    await app.connect();
    const { rows } = await app.query<{ owner: string; seeded: number }>(
      `SELECT tableowner AS owner, (SELECT count(*)::int FROM "Product") AS seeded FROM pg_tables WHERE tablename = 'IdempotencyKey'`,
    );
    await app.end();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.owner).not.toBe(role);
    expect(rows[0]!.seeded).toBeGreaterThan(0);
  });

  it("without it, the migrations go through DATABASE_URL (here: refused, the app's role creates nothing)", async () => {
    const { appUrl } = await productionLikeDatabase();
    await expect(setupDatabase(appUrl, () => {}, { demo: false })).rejects.toThrow(
      /permission denied/,
    );
  });
});
