// Migration 0004 on a database that already suffered the bug: duplicate orders for one checkout
// key. The unique index must still be created; the earliest order of each intent owns it, later
// duplicates keep intentKey NULL (visible to reconciliation through their shared idempotencyKey).
import { randomBytes } from "node:crypto";
import { cp, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, expect, inject, it } from "vitest";
import { migrate, MIGRATIONS_DIR } from "./migrate";

const NAME = `once_m0004_${randomBytes(6).toString("hex")}`;
const admin = new pg.Client({ connectionString: inject("pgAdminUrl") });
let client: pg.Client | undefined;
let temp: string | undefined;

afterAll(async () => {
  await client?.end();
  await admin.query(`DROP DATABASE IF EXISTS "${NAME}" WITH (FORCE)`);
  await admin.end();
  if (temp) await rm(temp, { recursive: true, force: true });
});

it("0004 keeps the first order of each intent and leaves earlier duplicates for reconciliation", async () => {
  await admin.connect();
  await admin.query(`CREATE DATABASE "${NAME}"`);
  const url = inject("pgAdminUrl").replace(/\/postgres$/, `/${NAME}`);
  // The migrations before 0004, as a database deployed before it has them.
  temp = await mkdtemp(path.join(os.tmpdir(), "once-m0004-"));
  const before = path.join(temp, "migrations");
  await cp(MIGRATIONS_DIR, before, { recursive: true });
  for (const name of await readdir(before))
    if (/^\d{4}_/.test(name) && name >= "0004_")
      await rm(path.join(before, name), { recursive: true });
  await migrate(url, { dir: before });

  client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`INSERT INTO "Tenant" ("id", "name") VALUES ('acme', 'Acme')`);
  const user = await client.query<{ id: string }>(
    `INSERT INTO "User" ("email", "name", "role", "tenantId") VALUES ('a@acme', 'A', 'TENANT', 'acme') RETURNING "id"`,
  );
  const insertOrder = async (key: string, createdAt: string) =>
    (
      await client!.query<{ id: string }>(
        `INSERT INTO "Order" ("tenantId", "userId", "totalCents", "currency", "idempotencyKey", "createdAt") VALUES ('acme', $1, 100, 'EUR', $2, $3) RETURNING "id"`,
        [user.rows[0]!.id, key, createdAt],
      )
    ).rows[0]!.id;
  const second = await insertOrder("k1", "2026-01-01T10:00:05Z");
  const first = await insertOrder("k1", "2026-01-01T10:00:00Z");
  const other = await insertOrder("k2", "2026-01-01T11:00:00Z");

  await migrate(url); // the project's migrations: 0004 (and any after it) now
  const { rows } = await client.query<{ id: string; intentKey: string | null }>(
    `SELECT "id", "intentKey" FROM "Order"`,
  );
  expect(Object.fromEntries(rows.map((r) => [r.id, r.intentKey]))).toEqual({
    [first]: "k1",
    [second]: null,
    [other]: "k2",
  });
  // From now on the index refuses a second order for an intent.
  await expect(
    client.query(
      `INSERT INTO "Order" ("tenantId", "userId", "totalCents", "currency", "idempotencyKey", "intentKey") VALUES ('acme', $1, 1, 'EUR', 'k2', 'k2')`,
      [user.rows[0]!.id],
    ),
  ).rejects.toMatchObject({ code: "23505", constraint: "Order_tenantId_intentKey_key" });
});
