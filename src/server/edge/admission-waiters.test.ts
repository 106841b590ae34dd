// Duplicates asleep on another request's key (`Prefer: wait`) are not work in progress: with an
// instance bounded to two requests in flight, one checkout held inside its transaction and eight
// duplicates sent one after another all get in, sleep with the bound free, and all get the first
// answer back when it commits. Counted in, a sleeping duplicate would fill the bound: the second
// would be refused 503 store_busy, and so would every request after it until the first ended.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { useTestDatabase } from "@/test/database";
import { TOKENS } from "@/test/http";
import { testAppWith } from "@/test/app";
import { lockProduct, stockedProductId } from "@/test/product-lock";
import { serveTrpc } from "../api/handler";
import type { ServerApp } from "../app";
import { Admission } from "./admission";

const t = useTestDatabase();
let app: ServerApp;
let productId: string;
/**
 * The instance's admission bounded to two requests in flight, its line's deadline a minute: what
 * is shown is that sleeping duplicates leave their places, not how fast a loaded machine lets 30 of
 * them through the one place left (with the store's 2 s wait, a busy machine refused some).
 */
const admission = new Admission({ served: 2, ceiling: 2, waitMs: 60_000 });

beforeAll(async () => {
  // DATABASE_URL gives the engine its LISTEN connection: without one nothing can wait.
  app = testAppWith(t.db, { DATABASE_URL: t.url });
  await app.engine.ready;
  productId = await stockedProductId(t.db);
});

afterAll(async () => {
  await app.engine.close();
});

/** The checkout as the route serves it: through the instance's admission, then tRPC. */
async function checkout(key: string, prefer?: string) {
  const waitMs = prefer ? Number(prefer.replace("wait=", "")) * 1000 : 0;
  const headers = new Headers({
    authorization: `Bearer ${TOKENS.acme}`,
    "idempotency-key": key,
    "content-type": "application/json",
  });
  if (prefer) headers.set("prefer", prefer);
  const req = new Request("http://localhost/api/trpc/checkout.placeOrder", {
    method: "POST",
    headers,
    body: JSON.stringify({ items: [{ productId, quantity: 1 }] }),
  });
  const res = await admission.admit((whileWaiting) => serveTrpc(req, app, { whileWaiting }), {
    waitMs,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Resolves once a session waits for the lock `holder` has. */
async function blockedBy(holder: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const [row] = await t.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS "n" FROM pg_stat_activity
        WHERE ${holder}::int = ANY(pg_blocking_pids("pid"))`;
      expect(row!.n).toBe(1);
    },
    { timeout: 60_000, interval: 10 },
  );
}

/**
 * A first checkout on a fresh key, held inside its transaction by a lock on its product while
 * `sendDuplicates` sends the same checkout with `Prefer: wait=10`; then the first is let go. Every
 * answer comes back, the first's and the duplicates', all checked to be the first's replay.
 */
async function whileFirstHeld(sendDuplicates: (send: () => void) => Promise<void>) {
  const key = `wait-${randomUUID()}`;
  const lock = await lockProduct(t.url, productId);
  const first = checkout(key);
  const duplicates: ReturnType<typeof checkout>[] = [];
  try {
    await blockedBy(lock.pid);
    expect(admission.size).toBe(1);
    await sendDuplicates(() => duplicates.push(checkout(key, "wait=10")));
  } finally {
    await lock.release();
  }
  const answer = await first;
  expect(answer.status).toBe(200);
  for (const duplicate of await Promise.all(duplicates)) {
    expect(duplicate.status).toBe(200);
    expect(duplicate.headers.get("idempotent-replayed")).toBe("true");
    expect(duplicate.headers.get("preference-applied")).toBe("wait=10");
    expect(duplicate.text).toBe(answer.text);
  }
  expect(admission.size).toBe(0);
  const [orders] = await t.db.$queryRaw<{ n: number }[]>`
    SELECT count(*)::int AS "n" FROM "Order" WHERE "idempotencyKey" = ${key}`;
  expect(orders!.n).toBe(1);
}

const settled = { timeout: 60_000, interval: 5 };

describe("duplicates waiting on one key, at the instance's bound of requests in flight", () => {
  it("are counted out while they sleep, so every one gets in, and every one gets the first answer", async () => {
    await whileFirstHeld(async (send) => {
      for (let i = 0; i < 8; i++) {
        send();
        // It got in, found the key held, and sleeps counted out: the bound is free again.
        await vi.waitFor(() => expect(admission.size).toBe(1), settled);
      }
    });
  });

  it("sent all at once, past the bound, they queue for a place instead of being refused, and all get the first answer", async () => {
    await whileFirstHeld(async (send) => {
      for (let i = 0; i < 30; i++) send();
      // Every one got in, past the queue, and sleeps counted out.
      await vi.waitFor(() => {
        expect(admission.queued).toBe(0);
        expect(admission.size).toBe(1);
      }, settled);
    });
  });
});
