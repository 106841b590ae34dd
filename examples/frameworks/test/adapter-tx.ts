// What each adapter app's POST /tx-orders must do (examples/frameworks/src/tx-orders.ts: a handler
// that writes its row through the key's transaction, `context(req).tx`): the row and the key's
// completion commit together, and a handler that fails after its write (a 5xx) leaves neither the
// row nor the key, so a retry runs anew.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { login } from "./adapter-app";

export function checkTransactionRoute(target: { app: string; url: () => string }) {
  const user = `dave-${target.app}`;
  const credentials: Record<string, string> = {};
  const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  beforeAll(async () => Object.assign(credentials, await login(target.url(), user)));
  afterAll(() => db.end());

  const send = async (key: string, body: object) => {
    const res = await fetch(`${target.url()}/tx-orders`, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key, ...credentials },
      body: JSON.stringify(body),
    });
    return {
      status: res.status,
      replayed: res.headers.get("idempotent-replayed"),
      body: await res.text(),
    };
  };
  const rows = async (item: string) =>
    (await db.query(`SELECT 1 FROM "Order" WHERE "item" = $1`, [item])).rowCount;
  const keyStatus = async (key: string) =>
    (
      await db.query<{ status: string }>(
        `SELECT "status" FROM "IdempotencyKey" WHERE "scope" = $1 AND "key" = $2`,
        [user, key],
      )
    ).rows.map((r) => r.status);

  describe(`${target.app}: a handler writing through the key's transaction`, () => {
    it("commits its row with the key's completion, and replays its answer", async () => {
      const key = randomUUID();
      const body = { item: `item-${randomUUID()}`, quantity: 1 };
      const placed = await send(key, body);
      expect(placed.status).toBe(201);
      expect(await rows(body.item)).toBe(1);
      expect(await keyStatus(key)).toEqual(["COMPLETED"]);
      const again = await send(key, body);
      expect([again.status, again.body, again.replayed]).toEqual([201, placed.body, "true"]);
      expect(await rows(body.item)).toBe(1);
    });

    it("rolls its row back when it fails after writing it: no row, the key released", async () => {
      const key = randomUUID();
      const body = { item: `item-${randomUUID()}`, quantity: 1, fail: true };
      const failed = await send(key, body);
      expect(failed.status).toBe(500);
      expect(await rows(body.item)).toBe(0);
      expect(await keyStatus(key)).toEqual([]);
      // Released, not stored: the same request runs again (and fails again), never replayed.
      const retry = await send(key, body);
      expect([retry.status, retry.replayed]).toEqual([500, null]);
      expect(await rows(body.item)).toBe(0);
      expect(await keyStatus(key)).toEqual([]);
    });
  });
}
