// Duplicates of a checkout in flight wait on it outside the line (waiters.ts): with every place
// taken and the line's queue full of other requests, they are neither refused nor queued, run no
// statement of their own while they wait or when they are answered, and each gets the first
// answer, replayed from memory. The line is filled by requests the test holds (no database work),
// the first checkout is held inside its transaction by a lock on its product, so nothing here
// depends on timing but a waiter's own deadline.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { useTestDatabase } from "@/test/database";
import { TOKENS } from "@/test/http";
import { testAppWith } from "@/test/app";
import { lockProduct, stockedProductId, type ProductLock } from "@/test/product-lock";
import { handleTrpcRequest } from "../api/handler";
import { callerOf } from "../api/context";
import { poolOf } from "../db/client";
import type { ServerApp } from "../app";
import { Admission } from "./admission";
import { apiRoutesFor } from "./api-routes";
import { Waiters } from "./waiters";

const t = useTestDatabase();
let app: ServerApp;
let productId: string;

beforeAll(async () => {
  // DATABASE_URL gives the engine its LISTEN connection, so answers are kept in memory.
  app = testAppWith(t.db, { DATABASE_URL: t.url });
  await app.engine.ready;
  productId = await stockedProductId(t.db);
});

afterAll(async () => {
  await app.engine.close();
});

/** A line of two places and a queue of three, with a wait long enough never to end in a test. */
function door(limits?: ConstructorParameters<typeof Waiters>[1]) {
  const admission = new Admission({ served: 2, waitMs: 600_000, maxQueued: 3 });
  const waiters = new Waiters(
    {
      callerOf: (headers) => callerOf(app, headers),
      remembers: (scope, key) => app.engine.remembers(scope, key),
      leaseMs: app.engine.config.leaseMs,
      minRetryAfterSeconds: app.engine.config.minRetryAfterSeconds,
    },
    limits,
  );
  const routes = apiRoutesFor({ ...app, admission, waiters });
  return { admission, waiters, routes };
}

type Door = ReturnType<typeof door>;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
}

function checkoutRequest(
  key: string,
  options: { prefer?: string; token?: string; quantity?: number } = {},
) {
  const headers = new Headers({
    authorization: `Bearer ${options.token ?? TOKENS.acme}`,
    "idempotency-key": key,
    "content-type": "application/json",
  });
  if (options.prefer) headers.set("prefer", options.prefer);
  return new Request("http://localhost/api/trpc/checkout.placeOrder", {
    method: "POST",
    headers,
    body: JSON.stringify({ items: [{ productId, quantity: options.quantity ?? 1 }] }),
  });
}

async function checkout(d: Door, key: string, options: Parameters<typeof checkoutRequest>[1] = {}) {
  const res = await d.routes.trpc(checkoutRequest(key, options));
  return { status: res.status, headers: res.headers, text: await res.text() } as Answer;
}

/** Every place taken and the queue full, by requests the test holds: returns their release. */
async function fillTheLine(d: Door, placesTaken: number): Promise<() => void> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  for (let i = 0; i < 2 - placesTaken + 3; i++)
    void d.admission.admit(() => released.then(() => new Response("held")));
  await vi.waitFor(() => expect(d.admission.queued).toBe(3), PATIENCE);
  return release;
}

/**
 * A door, a fresh key and a first checkout on it, held inside its transaction by a lock on its
 * product: `run` gets them; the lock is given back whatever `run` did.
 */
async function withFirstHeld(
  run: (held: { d: Door; key: string; lock: ProductLock; first: Promise<Answer> }) => Promise<void>,
  limits?: ConstructorParameters<typeof Waiters>[1],
): Promise<void> {
  const d = door(limits);
  const key = `waiters-${randomUUID()}`;
  const lock = await lockProduct(t.url, productId);
  try {
    const first = checkout(d, key);
    await vi.waitFor(async () => expect(await lock.blocked()).toHaveLength(1), PATIENCE);
    await run({ d, key, lock, first });
  } finally {
    await lock.release().catch(() => {});
  }
}

/** Statements sent to the app's pool (a query, or a connection taken for a transaction). */
function countStatements() {
  const pool = poolOf(t.db)!;
  const query = vi.spyOn(pool, "query");
  const connect = vi.spyOn(pool, "connect");
  return {
    count: () => query.mock.calls.length + connect.mock.calls.length,
    stop: () => {
      query.mockRestore();
      connect.mockRestore();
    },
  };
}

async function ordersFor(key: string): Promise<number> {
  const [row] = await t.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS "n" FROM "Order" WHERE "idempotencyKey" = ${key}`;
  return row!.n;
}

const PATIENCE = { timeout: 60_000, interval: 10 };

describe("duplicates of a request in flight, while the line is full of other requests", () => {
  it("1 000 wait outside the line, run no statement, and all replay the first answer", async () => {
    let releaseLine = () => {};
    const statements = countStatements();
    try {
      await withFirstHeld(async ({ d, key, lock, first }) => {
        releaseLine = await fillTheLine(d, 1);
        // The line is full: a new request is refused at once.
        expect((await checkout(d, `other-${randomUUID()}`)).status).toBe(503);
        const before = statements.count();
        const duplicates = Array.from({ length: 1000 }, () =>
          checkout(d, key, { prefer: "wait=10" }),
        );
        await vi.waitFor(() => expect(d.waiters.size).toBe(1000), PATIENCE);
        expect(d.admission.queued).toBe(3);
        expect(statements.count() - before).toBe(0);
        await lock.release();
        const answer = await first;
        expect(answer.status).toBe(200);
        const afterFirst = statements.count();
        for (const duplicate of await Promise.all(duplicates)) {
          expect(duplicate.status).toBe(200);
          expect(duplicate.headers.get("idempotent-replayed")).toBe("true");
          expect(duplicate.headers.get("preference-applied")).toBe("wait=10");
          expect(duplicate.text).toBe(answer.text);
        }
        // Answered from memory: not one statement for a thousand answers.
        expect(statements.count() - afterFirst).toBe(0);
        expect(d.waiters.size).toBe(0);
        expect(await ordersFor(key)).toBe(1);
      });
    } finally {
      statements.stop();
      releaseLine();
    }
  });

  it("past the bound on one key, the rest go through the line as any request", async () => {
    let releaseLine = () => {};
    try {
      await withFirstHeld(
        async ({ d, key, lock, first }) => {
          releaseLine = await fillTheLine(d, 1);
          const waiting = [1, 2].map(() => checkout(d, key, { prefer: "wait=10" }));
          await vi.waitFor(() => expect(d.waiters.size).toBe(2), PATIENCE);
          // The third is no waiter: the line is full, so it is refused.
          expect((await checkout(d, key, { prefer: "wait=10" })).status).toBe(503);
          await lock.release();
          expect((await first).status).toBe(200);
          for (const answer of await Promise.all(waiting)) expect(answer.status).toBe(200);
        },
        { perKey: 2, maxBytes: 1 << 20 },
      );
    } finally {
      releaseLine();
    }
  });
});

describe("what does not wait, and what a wait ends in", () => {
  it("another body is not held: 422 while the first is still in flight; another tenant's key is its own", async () => {
    await withFirstHeld(async ({ d, key, lock, first }) => {
      const other = await checkout(d, key, { prefer: "wait=10", quantity: 2 });
      expect(other.status).toBe(422);
      expect(JSON.parse(other.text).error.data.reason).toBe("idempotency_key_reused");
      expect(d.waiters.size).toBe(0);
      // globex's key of the same name is globex's: held by the same lock, not by acme's request.
      const globex = checkout(d, key, { prefer: "wait=10", token: TOKENS.globex });
      await vi.waitFor(async () => expect(await lock.blocked()).toHaveLength(2), PATIENCE);
      expect(d.waiters.size).toBe(0);
      await lock.release();
      expect((await first).status).toBe(200);
      const theirs = await globex;
      expect(theirs.status).toBe(200);
      expect(theirs.headers.get("idempotent-replayed")).toBeNull();
      expect(await ordersFor(key)).toBe(2);
    });
  });

  it("a wait that runs out is the engine's 409, with Retry-After and Preference-Applied", async () => {
    await withFirstHeld(async ({ d, key, lock, first }) => {
      const waited = await checkout(d, key, { prefer: "wait=1" });
      // The engine's own 409 for the same duplicate, through tRPC alone.
      const engine409 = await handleTrpcRequest(checkoutRequest(key), app);
      expect(waited.status).toBe(409);
      expect(engine409.status).toBe(409);
      expect(JSON.parse(waited.text)).toEqual(await engine409.json());
      expect(waited.headers.get("preference-applied")).toBe("wait=1");
      expect(waited.headers.get("retry-after")).toBe(engine409.headers.get("retry-after"));
      expect(waited.headers.get("link")).toBe(engine409.headers.get("link"));
      await lock.release();
      expect((await first).status).toBe(200);
    });
  });

  it("a first request released (a 5xx): one waiter runs it afresh, the others replay its answer", async () => {
    await withFirstHeld(async ({ d, key, lock, first }) => {
      const duplicates = Array.from({ length: 20 }, () => checkout(d, key, { prefer: "wait=10" }));
      await vi.waitFor(() => expect(d.waiters.size).toBe(20), PATIENCE);
      // The first's connection dies inside its transaction: the key is released, the first is 503.
      const [backend] = await lock.blocked();
      await t.db.$queryRaw`SELECT pg_terminate_backend(${backend}::int)`;
      expect((await first).status).toBe(503);
      // One waiter went through the line and now holds the key, held by the same lock.
      await vi.waitFor(async () => expect(await lock.blocked()).toHaveLength(1), PATIENCE);
      expect(d.waiters.size).toBe(19);
      await lock.release();
      const answers = await Promise.all(duplicates);
      const fresh = answers.filter((a) => a.headers.get("idempotent-replayed") === null);
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(fresh).toHaveLength(1);
      for (const answer of answers) expect(answer.text).toBe(fresh[0]!.text);
      expect(await ordersFor(key)).toBe(1);
    });
  });

  it("the front door's early refusal lets through only what may join a flight here", async () => {
    await withFirstHeld(async ({ d, key, lock, first }) => {
      const headers = (extra: Record<string, string>) => (name: string) =>
        ({
          authorization: `Bearer ${TOKENS.acme}`,
          "idempotency-key": key,
          prefer: "wait=10",
          ...extra,
        })[name];
      const url = "/api/trpc/checkout.placeOrder";
      expect(d.waiters.joinable("POST", url, headers({}))).toBe(true);
      expect(d.waiters.joinable("POST", url, headers({ prefer: "" }))).toBe(false);
      expect(d.waiters.joinable("POST", url, headers({ authorization: "Bearer x" }))).toBe(false);
      expect(d.waiters.joinable("POST", url, headers({ "idempotency-key": "k" }))).toBe(false);
      expect(d.waiters.joinable("POST", `${url}?batch=1`, headers({}))).toBe(false);
      await lock.release();
      expect((await first).status).toBe(200);
      expect(d.waiters.joinable("POST", url, headers({}))).toBe(false);
    });
  });
});
