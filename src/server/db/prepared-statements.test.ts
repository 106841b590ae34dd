// Prepared statements (DATABASE_PREPARED_STATEMENTS): the app's client names Prisma's statements
// and the engine names its own, so each connection parses and plans them once. Checked in
// PostgreSQL's list of the session's prepared statements, on a pool of one connection (so that
// list is the whole pool's), through the real checkout: the answers are the same either way.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { callTrpc, TOKENS } from "../../test/http";
import { createTestDb, useTestDatabase } from "../../test/database";
import { poolOf, type Db } from "./client";
import { MAX_NAMED_STATEMENTS, statementNames } from "./statement-names";

const t = useTestDatabase();
const clients: Db[] = [];
afterEach(async () => {
  for (const db of clients.splice(0)) await db.$disconnect();
});

function oneConnection(preparedStatements: boolean): Db {
  const db = createTestDb(t.url, { max: 1, preparedStatements });
  clients.push(db);
  return db;
}

async function preparedNames(db: Db): Promise<string[]> {
  const { rows } = await poolOf(db)!.query<{ name: string }>(
    "SELECT name FROM pg_prepared_statements ORDER BY name",
  );
  return rows.map((r) => r.name);
}

/** Two checkouts and a replay of the first: the answers a client sees. */
async function checkouts(db: Db) {
  const mug = await db.product.findUniqueOrThrow({ where: { sku: "MUG-001" } });
  const key = `prep-${randomUUID()}`;
  const place = (k: string) =>
    callTrpc(db, {
      path: "checkout.placeOrder",
      input: { items: [{ productId: mug.id, quantity: 1 }] },
      token: TOKENS.acme,
      key: k,
      method: "POST",
    });
  const first = await place(key);
  const replay = await place(key);
  const second = await place(`prep-${randomUUID()}`);
  return { first, replay, second };
}

describe("prepared statements", () => {
  it("on: Prisma's statements and the engine's are prepared once per connection, answers unchanged", async () => {
    const db = oneConnection(true);
    const { first, replay, second } = await checkouts(db);
    expect([first.status, replay.status, second.status]).toEqual([200, 200, 200]);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.json).toEqual(first.json);

    const names = await preparedNames(db);
    expect(names.some((n) => /^once_reserve_[0-9a-f]{12}$/.test(n))).toBe(true);
    expect(names.filter((n) => n.startsWith("prisma_")).length).toBeGreaterThan(3);
    // More checkouts use the same statements: the list is per statement, never per call.
    await checkouts(db);
    expect(await preparedNames(db)).toEqual(names);
  });

  it("off: nothing is prepared (what a transaction-mode pooler without prepared statements needs)", async () => {
    const db = oneConnection(false);
    const { first, replay } = await checkouts(db);
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(await preparedNames(db)).toEqual([]);
  });
});

describe("statement names", () => {
  it("gives one text one name, two texts two names", () => {
    const name = statementNames();
    expect(name({ sql: "SELECT 1" })).toBe(name({ sql: "SELECT 1" }));
    expect(name({ sql: "SELECT 1" })).toMatch(/^prisma_[0-9a-f]{24}$/);
    expect(name({ sql: "SELECT 2" })).not.toBe(name({ sql: "SELECT 1" }));
  });

  it("past its bound runs new texts unnamed, so SQL built from values cannot fill every connection", () => {
    const name = statementNames(2);
    const a = name({ sql: "SELECT 'a'" });
    name({ sql: "SELECT 'b'" });
    expect(name({ sql: "SELECT 'c'" })).toBe("");
    expect(name({ sql: "SELECT 'a'" })).toBe(a); // texts named before the bound keep their name
    expect(MAX_NAMED_STATEMENTS).toBeGreaterThanOrEqual(100);
  });
});
