// A database restored under the running app: the schema dropped and migrated and seeded again, so
// every type has a new id while the pool's connections hold statements prepared with the old ones.
// The app's pool recovers by itself: at most the request that meets a stale connection fails
// (503, never a 500), every checkout after it is served. A plain pg pool, the control, keeps
// failing: the test can tell.
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";
import { setupDatabase } from "../../../tools/db/setup";
import { createDb, type Db } from "./client";

const t = useTestDatabase();
const POOL_MAX = 3;
const clients: Db[] = [];
afterAll(async () => {
  for (const db of clients) await db.$disconnect();
});

async function productId(): Promise<string> {
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  try {
    return (await client.query<{ id: string }>(`SELECT "id" FROM "Product" LIMIT 1`)).rows[0]!.id;
  } finally {
    await client.end();
  }
}

async function checkout(db: Db, product: string) {
  const answer = await callTrpc(db, {
    path: "checkout.placeOrder",
    token: TOKENS.acme,
    key: crypto.randomUUID(),
    input: { items: [{ productId: product, quantity: 1 }] },
  });
  return { status: answer.status, reason: answer.json?.error?.data?.reason as string | undefined };
}

/** Drops the schema and makes it again, as a restore does: same tables, new type ids. */
async function restore(): Promise<void> {
  const client = new pg.Client({ connectionString: t.url });
  await client.connect();
  try {
    await client.query("DROP SCHEMA public CASCADE; CREATE SCHEMA public");
  } finally {
    await client.end();
  }
  await setupDatabase(t.url, () => {}, { demo: true });
}

/** A client whose pool's every connection has prepared the checkout's statements. */
async function warmed(db: Db): Promise<Db> {
  clients.push(db);
  const product = await productId();
  const answers = await Promise.all(
    Array.from({ length: 2 * POOL_MAX }, () => checkout(db, product)),
  );
  expect(answers.map((a) => a.status)).toEqual(Array(2 * POOL_MAX).fill(200));
  return db;
}

describe("a database restored under the running app", () => {
  it("the app's pool discards the connections from before it: one request may fail (503), every later one is served", async () => {
    const db = await warmed(createDb(t.url, { max: POOL_MAX, connectTimeoutMs: 20_000 }));
    await restore();
    const product = await productId();
    const first = await checkout(db, product);
    if (first.status !== 200) expect(first).toEqual({ status: 503, reason: "store_unavailable" });
    for (let i = 0; i < 2 * POOL_MAX; i++)
      expect(await checkout(db, product)).toEqual({
        status: 200,
        reason: undefined,
      });
  });

  it("control: a plain pg pool keeps answering 503 with its stale connections", async () => {
    const pool = new pg.Pool({ connectionString: t.url, max: POOL_MAX });
    const db = await warmed(createDb(t.url, { pool }));
    await restore();
    const product = await productId();
    for (let i = 0; i < POOL_MAX + 1; i++) expect((await checkout(db, product)).status).toBe(503);
    await pool.end();
  });
});
