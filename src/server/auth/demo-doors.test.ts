// Demo doors stay shut without demo mode: the demo tokens and demo accounts in a database (seeded
// for a demo now, or before migration 0003 marked demo rows) are nobody, while accounts and tokens
// made by the CLI work. The `{ demo: true }` runs are the control: the same rows do open in demo
// mode.
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { createTestDb, useTestDatabase } from "../../test/database";
import { migrate, MIGRATIONS_DIR } from "../../../tools/db/migrate";
import { seed } from "../../../tools/db/seed";
import { createApiToken, createUser } from "./accounts";
import { principalFromHeaders } from "./principal";
import { sessionCookieFor } from "../../test/sessions";

const t = useTestDatabase({ poolMax: 2 });
const DEMO_TOKENS = ["admin_demo_token", "acme_demo_token", "globex_demo_token"];
const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });
const cookie = async (userId: string) =>
  new Headers({ cookie: await sessionCookieFor(t.db, userId) });

const dropLater: string[] = [];
afterAll(async () => {
  const admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  for (const name of dropLater) await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

async function emptyDatabase(): Promise<string> {
  const name = `once_doors_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  dropLater.push(name);
  return inject("pgAdminUrl").replace(/\/postgres$/, `/${name}`);
}

describe("a database seeded in demo mode, served without it", () => {
  it.each(DEMO_TOKENS)("%s is nobody (and is somebody in demo mode)", async (token) => {
    expect(await principalFromHeaders(t.db, bearer(token), { demo: false })).toBeNull();
    expect(await principalFromHeaders(t.db, bearer(token), { demo: true })).not.toBeNull();
  });

  it("a demo account's session cookie is nobody", async () => {
    const admin = await t.db.user.findUniqueOrThrow({ where: { email: "admin@example.com" } });
    expect(await principalFromHeaders(t.db, await cookie(admin.id), { demo: false })).toBeNull();
    expect(await principalFromHeaders(t.db, await cookie(admin.id), { demo: true })).toMatchObject({
      role: "ADMIN",
    });
  });

  it("an account and a token made by the CLI work without demo mode", async () => {
    const user = await createUser(t.db, {
      email: "buyer@acme.example",
      name: "Buyer",
      role: "TENANT",
      tenantId: "acme",
      password: "a long enough password",
    });
    const token = await createApiToken(t.db, { email: "buyer@acme.example", label: "ci" });
    expect(await principalFromHeaders(t.db, bearer(token), { demo: false })).toMatchObject({
      userId: user.id,
      tenantId: "acme",
    });
    expect(await principalFromHeaders(t.db, await cookie(user.id), { demo: false })).toMatchObject({
      userId: user.id,
    });
  });
});

describe("the seed", () => {
  it("without demo mode creates tenants and the catalog, and no account or token", async () => {
    const url = await emptyDatabase();
    await migrate(url);
    const db = createTestDb(url, { max: 1 });
    try {
      await seed(db, { demo: false });
      expect(await db.user.count()).toBe(0);
      expect(await db.apiToken.count()).toBe(0);
      expect(await db.tenant.count()).toBe(2);
      expect(await db.product.count()).toBeGreaterThan(0);
    } finally {
      await db.$disconnect();
    }
  });

  it("in demo mode marks every account and token it makes as demo", async () => {
    expect(
      await t.db.user.count({ where: { email: { endsWith: "@example.com" }, demo: false } }),
    ).toBe(0);
    expect(await t.db.apiToken.count({ where: { label: "demo", demo: false } })).toBe(0);
  });
});

describe("migration 0003 on a database seeded before it", () => {
  it("marks the old demo accounts and tokens, so they are refused without demo mode", async () => {
    const url = await emptyDatabase();
    const before = await mkdtemp(path.join(os.tmpdir(), "once-pre-0003-"));
    try {
      for (const name of ["0001_init", "0002_provider_event_backoff", "migration_lock.toml"]) {
        await cp(path.join(MIGRATIONS_DIR, name), path.join(before, name), { recursive: true });
      }
      await migrate(url, { dir: before });
      // What the seed wrote before 0003: the demo accounts and their tokens, unmarked.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query(`INSERT INTO "Tenant" (id, name) VALUES ('acme', 'Acme Corp')`);
      await client.query(`
        WITH u AS (INSERT INTO "User" (email, name, role, "tenantId") VALUES
          ('admin@example.com', 'Operator', 'ADMIN', NULL), ('acme@example.com', 'Acme buyer', 'TENANT', 'acme') RETURNING id, email)
        INSERT INTO "ApiToken" ("tokenHash", label, "userId")
        SELECT encode(sha256((split_part(email, '@', 1) || '_demo_token')::bytea), 'hex'), 'demo', id FROM u`);
      await client.end();
    } finally {
      await rm(before, { recursive: true, force: true });
    }
    expect(await migrate(url)).toEqual(expect.arrayContaining(["0003_auth_doors"]));
    const db = createTestDb(url, { max: 1 });
    try {
      expect(await db.user.count({ where: { demo: false } })).toBe(0);
      expect(await db.apiToken.count({ where: { demo: false } })).toBe(0);
      for (const token of ["admin_demo_token", "acme_demo_token"]) {
        expect(await principalFromHeaders(db, bearer(token), { demo: false })).toBeNull();
        expect(await principalFromHeaders(db, bearer(token), { demo: true })).not.toBeNull();
      }
    } finally {
      await db.$disconnect();
    }
  });
});
