// POST /api/refunds (examples/plain/src/app/api/refunds/route.ts, one call to idempotent) against
// `next start`: it answers as the tRPC side does for a first request, a replay, another body, no
// key, a duplicate in flight (409, or the replay with Prefer: wait) and the store down (503).
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNextInstance } from "../../../tools/next/instance";
import { freePort } from "../../../tools/process";

const appUrl = process.env.APP_URL!;
const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
beforeAll(() => db.connect());
afterAll(() => db.end());

const caller = `Bearer ${randomUUID()}`;
const refund = (
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
  url = appUrl,
) =>
  fetch(`${url}/api/refunds`, {
    method: "POST",
    headers: {
      authorization: caller,
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
      ...headers,
    },
    body: JSON.stringify(body),
  });

async function newOrder(): Promise<string> {
  const id = randomUUID();
  await db.query(`INSERT INTO "Order" ("id", "totalCents") VALUES ($1, 5000)`, [id]);
  return id;
}

const refunded = async (id: string) =>
  (
    await db.query<{ refundedCents: number }>(
      `SELECT "refundedCents" FROM "Order" WHERE "id" = $1`,
      [id],
    )
  ).rows[0]!.refundedCents;

async function expectProblem(response: Response, status: number, reason: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  expect(await response.json()).toMatchObject({ status, reason });
}

describe("POST /api/refunds, a Route Handler protected by @once/idempotency/http", () => {
  it("refunds once: the first answer with Idempotency-Key-Expires, the retry replayed byte for byte", async () => {
    const orderId = await newOrder();
    const key = randomUUID();
    const first = await refund(key, { orderId, amountCents: 700 });
    expect(first.status).toBe(201);
    expect(Date.parse(first.headers.get("idempotency-key-expires")!)).toBeGreaterThan(Date.now());
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const firstBody = await first.text();

    const replay = await refund(key, { amountCents: 700, orderId }); // the same JSON, members reordered
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(firstBody);
    expect(await refunded(orderId)).toBe(700);
  });

  it("refuses the same key with another body (422) and a request without a key (400), running nothing", async () => {
    const orderId = await newOrder();
    const key = randomUUID();
    expect((await refund(key, { orderId, amountCents: 100 })).status).toBe(201);
    await expectProblem(
      await refund(key, { orderId, amountCents: 9_999 }),
      422,
      "idempotency_key_reused",
    );
    await expectProblem(
      await refund(undefined, { orderId, amountCents: 100 }),
      400,
      "idempotency_key_missing",
    );
    expect(await refunded(orderId)).toBe(100);
  });

  it("answers a duplicate in flight 409 with Retry-After, and with Prefer: wait the first request's answer", async () => {
    const orderId = await newOrder();
    const key = randomUUID();
    // Hold the order's row: the first request's UPDATE waits on it inside the handler, key
    // reserved.
    const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM "Order" WHERE "id" = $1 FOR UPDATE`, [orderId]);
      const first = refund(key, { orderId, amountCents: 250 });
      await lockWaiter();

      // Sent first, answered last: it waits for the first request's answer instead of a 409.
      const waiting = refund(key, { orderId, amountCents: 250 }, { prefer: "wait=5" });
      const duplicate = await refund(key, { orderId, amountCents: 250 });
      expect(Number(duplicate.headers.get("retry-after"))).toBeGreaterThan(0);
      await expectProblem(duplicate, 409, "request_in_progress");

      await holder.query("COMMIT");
      const [firstAnswer, waited] = await Promise.all([first, waiting]);
      expect([firstAnswer.status, waited.status]).toEqual([201, 201]);
      expect(waited.headers.get("idempotent-replayed")).toBe("true");
      expect(await waited.text()).toBe(await firstAnswer.text());
      expect(await refunded(orderId)).toBe(250);
    } finally {
      await holder.end();
    }
  });

  it("is one call to idempotent: its only statement besides the imports, a screen long", () => {
    const route = readFileSync(
      path.join(import.meta.dirname, "..", "src", "app", "api", "refunds", "route.ts"),
      "utf8",
    );
    const code = route.split("\n").filter((line) => line.trim() && !line.trim().startsWith("//"));
    // Top-level lines (not indented) other than imports: the one `export const POST = idempotent(`
    // and its closing `);`.
    const topLevel = code.filter((line) => !/^\s/.test(line) && !line.startsWith("import "));
    expect(topLevel).toEqual(["export const POST = idempotent(", ");"]);
    expect(route.match(/idempotent\(/g)).toHaveLength(1);
    expect(code.length).toBeLessThanOrEqual(25);
  });

  it("answers 503 store_unavailable with Retry-After when PostgreSQL cannot be reached", async () => {
    const closed = await freePort();
    const server = await startNextInstance(
      { DATABASE_URL: `postgresql://postgres:postgres@127.0.0.1:${closed}/postgres` },
      { app: path.resolve(import.meta.dirname, "..") },
    );
    try {
      const down = await refund(
        randomUUID(),
        { orderId: "any", amountCents: 1 },
        {},
        server.baseURL,
      );
      expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);
      await expectProblem(down, 503, "store_unavailable");
    } finally {
      await server.stop();
    }
  });
});

/**
 * Resolves once a session waits for a lock on an order's row (the handler, inside its transaction).
 */
async function lockWaiter(): Promise<void> {
  for (;;) {
    const { rowCount } = await db.query(
      `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%"Order"%' AND pid <> pg_backend_pid()`,
    );
    if (rowCount) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
