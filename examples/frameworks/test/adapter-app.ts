// What each adapter app (Express, Fastify, NestJS) must do with its existing POST /orders handler
// protected: the first call and its byte-for-byte replay, 422, 409 and Prefer: wait, 400, 503
// with PostgreSQL stopped, 20 concurrent duplicates making one row, two users' equal keys kept
// apart, a caller with no identity refused; and the draft's vectors (runDraftConformance).
import { randomUUID } from "node:crypto";
import { runDraftConformance } from "@once/idempotency/conformance";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { stopPostgres } from "../../../tools/examples/server-apps";

const UNREACHABLE_ITEM = "from-the-closed-warehouse"; // examples/frameworks/src/orders.ts

type Credentials = Record<string, string>;

/** Logs `user` in: a session cookie (Express) or a bearer token (Fastify, NestJS). */
export async function login(base: string, user: string): Promise<Credentials> {
  const res = await fetch(`${base}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ user }),
  });
  expect(res.status).toBeLessThan(300);
  const cookie = res.headers.get("set-cookie");
  if (cookie) return { cookie: cookie.split(";")[0]! };
  return { authorization: `Bearer ${((await res.json()) as { token: string }).token}` };
}

interface Sent {
  status: number;
  headers: Headers;
  body: string;
}

export function checkAdapterApp(target: {
  app: string;
  url: () => string;
  stoppableUrl: () => string;
  /**
   * Who refuses a body no parser read: the adapter (Express and NestJS leave `req.body` unset,
   * and the adapter answers 415 as problem details), or the framework before it (Fastify answers
   * 415 for a content type it has no parser for, before any route hook).
   */
  unreadBodyRefusedBy: "adapter" | "framework";
}) {
  const alice: Credentials = {};
  const bob: Credentials = {};
  const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
  beforeAll(async () => {
    Object.assign(alice, await login(target.url(), `alice-${target.app}`));
    Object.assign(bob, await login(target.url(), `bob-${target.app}`));
  });
  afterAll(() => db.end());

  const order = (quantity = 2) => ({ item: `item-${randomUUID()}`, quantity });
  const rows = async (item: string) =>
    (await db.query(`SELECT "owner" FROM "Order" WHERE "item" = $1`, [item])).rows as {
      owner: string;
    }[];
  async function send(
    key: string | undefined,
    body: unknown,
    as: Credentials = alice,
    extra: Record<string, string> = {},
    base = target.url(),
  ): Promise<Sent> {
    const headers: Record<string, string> = { "content-type": "application/json", ...as, ...extra };
    if (key !== undefined) headers["idempotency-key"] = key;
    const res = await fetch(`${base}/orders`, {
      method: "POST",
      headers,
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: await res.text() };
  }
  const reason = (sent: Sent) => (JSON.parse(sent.body) as { reason?: string }).reason;

  describe(`${target.app}: the existing POST /orders, protected`, () => {
    it("runs the first call, and replays it byte for byte with Idempotent-Replayed", async () => {
      const key = randomUUID();
      const body = order();
      const first = await send(key, body);
      const retry = await send(key, body);
      expect(first.status).toBe(201);
      expect(first.headers.get("idempotent-replayed")).toBeNull();
      expect([retry.status, retry.body]).toEqual([first.status, first.body]);
      expect(retry.headers.get("idempotent-replayed")).toBe("true");
      expect(retry.headers.get("content-type")).toBe(first.headers.get("content-type"));
      expect(await rows(body.item)).toHaveLength(1);
    });

    it("answers 422 to the key reused with another order, as problem details", async () => {
      const key = randomUUID();
      await send(key, order());
      const other = await send(key, order());
      expect(other.status).toBe(422);
      expect(other.headers.get("content-type")).toBe("application/problem+json");
      expect(reason(other)).toBe("idempotency_key_reused");
    });

    it("answers 400 without a key or with a malformed one, and records nothing", async () => {
      const body = order();
      for (const key of [undefined, "two words"]) {
        const refused = await send(key, body);
        expect(refused.status).toBe(400);
        expect(refused.headers.get("content-type")).toBe("application/problem+json");
      }
      expect(await rows(body.item)).toHaveLength(0);
    });

    it("refuses a caller with no identity (401) and records nothing", async () => {
      const body = order();
      expect((await send(randomUUID(), body, {})).status).toBe(401);
      expect(await rows(body.item)).toHaveLength(0);
    });

    it("refuses a body in a form it cannot fingerprint (415) and records nothing", async () => {
      const key = randomUUID();
      const item = `item-${randomUUID()}`;
      const res = await fetch(`${target.url()}/orders`, {
        method: "POST",
        headers: { ...alice, "content-type": "application/xml", "idempotency-key": key },
        body: `<order><item>${item}</item><quantity>1</quantity></order>`,
      });
      expect(res.status).toBe(415);
      const text = await res.text();
      if (target.unreadBodyRefusedBy === "adapter") {
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(text).toContain("No body parser read this application/xml body");
      }
      const keys = await db.query(`SELECT 1 FROM "IdempotencyKey" WHERE "key" = $1`, [key]);
      expect(keys.rowCount).toBe(0);
      expect(await rows(item)).toHaveLength(0);
    });

    it("runs 20 concurrent requests with one key once: one row, one answer", async () => {
      const key = randomUUID();
      const body = order();
      const answers = await Promise.all(Array.from({ length: 20 }, () => send(key, body)));
      expect(await rows(body.item)).toHaveLength(1);
      const ok = answers.filter((a) => a.status === 201);
      expect(new Set(ok.map((a) => a.body)).size).toBe(1);
      for (const a of answers.filter((x) => x.status !== 201)) {
        expect(a.status).toBe(409);
        expect(reason(a)).toBe("request_in_progress");
      }
      expect((await send(key, body)).body).toBe(ok[0]!.body);
    });

    it("keeps two users' equal keys apart: one order each, their own", async () => {
      const key = randomUUID();
      const body = order();
      const [a, b] = await Promise.all([send(key, body, alice), send(key, body, bob)]);
      expect([a.status, b.status]).toEqual([201, 201]);
      expect(a.body).not.toBe(b.body);
      const owners = (await rows(body.item)).map((r) => r.owner).sort();
      expect(owners).toEqual([`alice-${target.app}`, `bob-${target.app}`]);
    });

    it("answers 409 while the first request runs, and Prefer: wait gets its answer", async () => {
      const holder = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await holder.connect();
      try {
        await holder.query(`BEGIN; LOCK TABLE "Order" IN EXCLUSIVE MODE`);
        const key = randomUUID();
        const body = order();
        const first = send(key, body);
        await insertWaiting();
        const waiting = send(key, body, alice, { prefer: "wait=10" });
        const during = await send(key, body);
        expect(during.status).toBe(409);
        expect(reason(during)).toBe("request_in_progress");
        expect(Number(during.headers.get("retry-after"))).toBeGreaterThan(0);
        await holder.query("COMMIT");
        const [done, waited] = await Promise.all([first, waiting]);
        expect([done.status, waited.status]).toEqual([201, 201]);
        expect(waited.body).toBe(done.body);
        expect(waited.headers.get("idempotent-replayed")).toBe("true");
        expect(waited.headers.get("preference-applied")).toMatch(/^wait=/);
      } finally {
        await holder.end();
      }
    });

    it("answers 503 store_unavailable with PostgreSQL stopped, and runs nothing", async () => {
      // The app again, on a PostgreSQL of its own, stopped for real (test/global-setup.ts).
      const base = target.stoppableUrl();
      const credentials = await login(base, "carol");
      await stopPostgres(inject("serverApps").stoppable!.dataDir);
      const down = await send(randomUUID(), order(), credentials, {}, base);
      expect(down.status).toBe(503);
      expect(reason(down)).toBe("store_unavailable");
      expect(Number(down.headers.get("retry-after"))).toBeGreaterThan(0);
    });
  });

  /** Resolves once a session waits for the lock on "Order" (the handler's INSERT). */
  async function insertWaiting(): Promise<void> {
    for (;;) {
      const { rowCount } = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%"Order"%' AND pid <> pg_backend_pid()`,
      );
      if (rowCount) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  runDraftConformance({
    name: `${target.app} adapter`,
    url: () => `${target.url()}/orders`,
    headers: alice,
    body: () => order(),
    // 30 000 lines: about 1.5 MB, over the engine's 1 MiB stored-answer limit.
    largeBody: () => order(30_000),
    refusedBody: () => ({ item: "nothing", quantity: 0 }),
    failingBody: () => ({ item: UNREACHABLE_ITEM, quantity: 1 }),
  });
}
