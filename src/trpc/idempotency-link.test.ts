import { createTRPCUntypedClient, TRPCClientError, type TRPCLink } from "@trpc/client";
import type { AnyTRPCRouter } from "@trpc/server";
import { observable } from "@trpc/server/observable";
import { describe, expect, it } from "vitest";
import { idempotencyHeaders, idempotencyInfoOfError, idempotencyLink, type IdempotencyEvent } from "./idempotency-link";
import { classifyFailure, parseRetryAfter, retryDelayMs } from "./retry-policy";
import {
  beginIntent,
  canonicalLines,
  cartHash,
  clearIntent,
  INTENT_MAX_AGE_MS,
  intentStorageFor,
  pendingIntentFor,
  placeOrderInput,
  readIntent,
} from "./checkout-intent";

// ---------------------------------------------------------------------------------------------
// Fixtures: what the HTTP link hands up, written out literally.

function httpError(status: number, reason: string | undefined, headers: Record<string, string> = {}) {
  const response = new Response("{}", { status, headers });
  return TRPCClientError.from(
    { error: { message: reason ?? "error", code: -32000, data: { httpStatus: status, ...(reason ? { reason } : {}) } } },
    { meta: { response } },
  );
}
const networkError = () => TRPCClientError.from(new TypeError("Failed to fetch"));
const success = (data: unknown, headers: Record<string, string> = {}) => ({
  result: { type: "data" as const, data },
  context: { response: new Response("{}", { status: 200, headers }) },
});

type Step = ReturnType<typeof success> | Error;

/** A terminating link that answers attempt n with steps[n] and records the keys it saw. */
function scripted(steps: Step[]) {
  const seen: { key: unknown; context: Record<string, unknown> }[] = [];
  const link: TRPCLink<AnyTRPCRouter> =
    () =>
    ({ op }) =>
      observable((observer) => {
        seen.push({ key: (op.context as { idempotencyKey?: unknown }).idempotencyKey, context: op.context });
        const step = steps[seen.length - 1];
        if (!step) throw new Error("no more scripted answers");
        if (step instanceof Error) observer.error(step as TRPCClientError<AnyTRPCRouter>);
        else {
          observer.next(step);
          observer.complete();
        }
      });
  return { link, seen };
}

function clientWith(steps: Step[], options: Parameters<typeof idempotencyLink>[0] = {}) {
  const { link, seen } = scripted(steps);
  const delays: number[] = [];
  const client = createTRPCUntypedClient<AnyTRPCRouter>({
    links: [
      idempotencyLink({
        newKey: () => "generated-key",
        setTimeout: (fn, ms) => {
          delays.push(ms);
          queueMicrotask(fn);
          return 0;
        },
        clearTimeout: () => {},
        ...options,
      }),
      link,
    ],
  });
  return { client, seen, delays };
}

// ---------------------------------------------------------------------------------------------

describe("Retry-After", () => {
  it("reads delta-seconds", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter(" 0 ")).toBe(0);
  });
  it("reads an HTTP date relative to now", () => {
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:28:03 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT"))).toBe(3000);
    expect(parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT"))).toBe(0);
  });
  it("ignores what it cannot read", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("-1")).toBeUndefined();
  });
});

describe("backoff", () => {
  const opts = { baseDelayMs: 250, maxDelayMs: 5000 };
  it("doubles per attempt from the base", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, undefined, opts))).toEqual([250, 500, 1000, 2000]);
  });
  it("honours Retry-After over the backoff", () => {
    expect(retryDelayMs(1, 1000, opts)).toBe(1000);
    expect(retryDelayMs(4, 1000, opts)).toBe(1000);
  });
  it("never waits longer than the cap", () => {
    expect(retryDelayMs(10, undefined, opts)).toBe(5000);
    expect(retryDelayMs(1, 60_000, opts)).toBe(5000);
  });
});

describe("which failures are retried with the same key", () => {
  it.each([
    ["a lost request or response", networkError(), { retry: true, reason: "network" }],
    [
      "409 request_in_progress",
      httpError(409, "request_in_progress", { "Retry-After": "1" }),
      { retry: true, reason: "request_in_progress", retryAfterMs: 1000 },
    ],
    ["503 store_unavailable", httpError(503, "store_unavailable", { "Retry-After": "2" }), { retry: true, reason: "store_unavailable", retryAfterMs: 2000 }],
  ])("retries %s", (_name, error, expected) => {
    expect(classifyFailure(error)).toMatchObject(expected);
  });

  it.each([
    ["412 out_of_stock", httpError(412, "out_of_stock")],
    ["404 product_not_found", httpError(404, "product_not_found")],
    ["422 idempotency_key_reused", httpError(422, "idempotency_key_reused")],
    ["400 invalid input", httpError(400, "invalid_input")],
    ["401", httpError(401, undefined)],
    ["409 for another reason", httpError(409, "something_else")],
    ["500", httpError(500, undefined)],
  ])("never retries the final answer %s", (_name, error) => {
    expect(classifyFailure(error).retry).toBe(false);
  });

  it("does not retry what the caller aborted", () => {
    expect(classifyFailure(new DOMException("AbortError", "AbortError")).retry).toBe(false);
    expect(classifyFailure(TRPCClientError.from(new DOMException("AbortError", "AbortError"))).retry).toBe(false);
  });
});

describe("headers", () => {
  it("sends the key, Prefer: wait and, when asked, the demo delay on mutations only", () => {
    expect(idempotencyHeaders({ op: { type: "mutation", context: { idempotencyKey: "k1", demoDelayMs: 1500 } } })).toEqual({
      "Idempotency-Key": "k1",
      Prefer: "wait=10",
      "x-demo-delay-ms": "1500",
    });
    expect(idempotencyHeaders({ op: { type: "mutation", context: { idempotencyKey: "k1", demoDelayMs: 0 } } })).toEqual({
      "Idempotency-Key": "k1",
      Prefer: "wait=10",
    });
    expect(idempotencyHeaders({ op: { type: "query", context: { idempotencyKey: "k1" } } })).toEqual({});
  });
});

describe("the link", () => {
  it("gives a mutation a key and reports a first execution as not replayed", async () => {
    const events: IdempotencyEvent[] = [];
    const { client, seen } = clientWith([success({ order: { id: "o1" } })]);
    const data = await client.mutation("checkout.placeOrder", {}, { context: { onIdempotencyEvent: (e: IdempotencyEvent) => events.push(e) } });
    expect(data).toEqual({ order: { id: "o1" } });
    expect(seen.map((s) => s.key)).toEqual(["generated-key"]);
    expect(events.at(-1)).toEqual({ type: "answer", key: "generated-key", attempts: 1, replayed: false, ok: true, status: 200 });
  });

  it("uses the caller's key (the intent's)", async () => {
    const { client, seen } = clientWith([success({})]);
    await client.mutation("checkout.placeOrder", {}, { context: { idempotencyKey: "intent-key" } });
    expect(seen.map((s) => s.key)).toEqual(["intent-key"]);
  });

  it("leaves queries alone", async () => {
    const { client, seen } = clientWith([networkError()]);
    await expect(client.query("orders.list", {})).rejects.toThrow();
    expect(seen).toHaveLength(1);
    expect(seen[0]!.key).toBeUndefined();
  });

  it("retries a lost response with the same key and reports the replay", async () => {
    const events: IdempotencyEvent[] = [];
    const { client, seen, delays } = clientWith([networkError(), success({ order: { id: "o1" } }, { "Idempotent-Replayed": "true" })]);
    await client.mutation("checkout.placeOrder", {}, { context: { idempotencyKey: "k", onIdempotencyEvent: (e: IdempotencyEvent) => events.push(e) } });
    expect(seen.map((s) => s.key)).toEqual(["k", "k"]);
    expect(delays).toEqual([250]);
    expect(events.map((e) => e.type)).toEqual(["attempt", "retry", "attempt", "answer"]);
    expect(events.at(-1)).toMatchObject({ replayed: true, attempts: 2, ok: true });
  });

  it("waits what Retry-After says on 409 request_in_progress, then gets the replay", async () => {
    const { client, seen, delays } = clientWith([
      httpError(409, "request_in_progress", { "Retry-After": "1" }),
      httpError(409, "request_in_progress", { "Retry-After": "2" }),
      success({}, { "Idempotent-Replayed": "true" }),
    ]);
    await client.mutation("checkout.placeOrder", {}, { context: { idempotencyKey: "k" } });
    expect(seen.map((s) => s.key)).toEqual(["k", "k", "k"]);
    expect(delays).toEqual([1000, 2000]);
  });

  it("gives up after the bounded number of attempts", async () => {
    const { client, seen } = clientWith(
      Array.from({ length: 10 }, () => networkError()),
      { maxAttempts: 3 },
    );
    await expect(client.mutation("checkout.placeOrder", {}, { context: { idempotencyKey: "k" } })).rejects.toThrow();
    expect(seen).toHaveLength(3);
  });

  it("never retries a final 4xx, and marks a replayed failure as replayed", async () => {
    const { client, seen } = clientWith([httpError(412, "out_of_stock", { "Idempotent-Replayed": "true" })]);
    const error = await client.mutation("checkout.placeOrder", {}, { context: { idempotencyKey: "k" } }).catch((e: unknown) => e);
    expect(seen).toHaveLength(1);
    expect(error).toBeInstanceOf(TRPCClientError);
    expect(idempotencyInfoOfError(error)).toEqual({ key: "k", replayed: true, attempts: 1 });
  });
});

// ---------------------------------------------------------------------------------------------

class MemoryStorage {
  private map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

describe("checkout intents", () => {
  const cartA = [
    { productId: "p2", quantity: 1 },
    { productId: "p1", quantity: 2 },
  ];
  const cartB = [
    { productId: "p1", quantity: 3 },
    { productId: "p2", quantity: 1 },
  ];

  it("canonicalises the cart so the same snapshot always sends the same input", () => {
    expect(
      canonicalLines([
        { productId: "b", quantity: 1 },
        { productId: "a", quantity: 2 },
        { productId: "a", quantity: 1 },
        { productId: "c", quantity: 0 },
      ]),
    ).toEqual([
      { productId: "a", quantity: 3 },
      { productId: "b", quantity: 1 },
    ]);
    expect(cartHash(cartA)).toBe(cartHash([...cartA].reverse()));
    expect(cartHash(cartA)).not.toBe(cartHash(cartB));
    expect(placeOrderInput(cartA)).toEqual({
      items: [
        { productId: "p1", quantity: 2 },
        { productId: "p2", quantity: 1 },
      ],
    });
  });

  it("reuses the pending key for the same cart (double-click, retry, reload)", () => {
    const storage = new MemoryStorage();
    const first = beginIntent(storage, cartA, "key-1", 1_000);
    const again = beginIntent(storage, [...cartA].reverse(), "key-2", 2_000);
    expect(again).toEqual(first);
    expect(again.key).toBe("key-1");
    expect(pendingIntentFor(storage, cartA, 3_000)?.key).toBe("key-1");
  });

  it("makes a new key for a changed cart", () => {
    const storage = new MemoryStorage();
    beginIntent(storage, cartA, "key-1", 1_000);
    expect(beginIntent(storage, cartB, "key-2", 2_000).key).toBe("key-2");
    expect(pendingIntentFor(storage, cartA, 3_000)).toBeNull();
  });

  it("forgets the intent once cleared, or when older than the server keeps keys", () => {
    const storage = new MemoryStorage();
    beginIntent(storage, cartA, "key-1", 1_000);
    expect(readIntent(storage, 1_000 + INTENT_MAX_AGE_MS + 1)).toBeNull();
    clearIntent(storage);
    expect(readIntent(storage, 2_000)).toBeNull();
    expect(beginIntent(storage, cartA, "key-3", 3_000).key).toBe("key-3");
  });

  it("keeps each account's pending intent apart in a shared tab", () => {
    const tab = new MemoryStorage();
    const acme = intentStorageFor(tab, "acct-acme");
    const globex = intentStorageFor(tab, "acct-globex");
    beginIntent(acme, cartA, "acme-key", 1_000);
    // globex signs in on the same tab with the very same cart: not acme's checkout to resume.
    expect(pendingIntentFor(globex, cartA, 2_000)).toBeNull();
    expect(beginIntent(globex, cartA, "globex-key", 2_000).key).toBe("globex-key");
    clearIntent(globex);
    // acme comes back: its own pending checkout is still there, with its key.
    expect(pendingIntentFor(acme, cartA, 3_000)?.key).toBe("acme-key");
  });

  it("ignores garbage in storage", () => {
    const storage = new MemoryStorage();
    storage.setItem("once.checkout.intent", "{not json");
    expect(readIntent(storage)).toBeNull();
    storage.setItem("once.checkout.intent", JSON.stringify({ key: 1 }));
    expect(readIntent(storage)).toBeNull();
  });
});
