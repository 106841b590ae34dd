// The client's rules as pure functions: when to send again and after how long, which headers a
// mutation carries, and the key-per-intent tracker. What the link does with them against a real
// server is client-link.test.ts. Last, the client's import graph: nothing server-only reaches a
// browser bundle.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { TRPCClientError } from "@trpc/client";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { idempotencyHeaders } from "../src/client/headers";
import { createIntentKeys, fingerprintOf, type KeyValueStorage } from "../src/client/intent-keys";
import { classifyFailure, parseRetryAfter, retryDelayMs } from "../src/client/retry-policy";

function httpError(
  status: number,
  reason: string | undefined,
  headers: Record<string, string> = {},
) {
  const response = new Response("{}", { status, headers });
  return TRPCClientError.from(
    {
      error: {
        message: reason ?? "error",
        code: -32000,
        data: { httpStatus: status, ...(reason ? { reason } : {}) },
      },
    },
    { meta: { response } },
  );
}

describe("Retry-After", () => {
  it("reads delta-seconds", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter(" 0 ")).toBe(0);
  });
  it("reads an HTTP date relative to now", () => {
    expect(
      parseRetryAfter("Wed, 21 Oct 2026 07:28:03 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT")),
    ).toBe(3000);
    expect(
      parseRetryAfter("Wed, 21 Oct 2026 07:27:00 GMT", Date.parse("Wed, 21 Oct 2026 07:28:00 GMT")),
    ).toBe(0);
  });
  it("ignores what it cannot read", () => {
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("-1")).toBeUndefined();
  });
});

describe("backoff", () => {
  const opts = (random: number) => ({ baseDelayMs: 250, maxDelayMs: 5000, random: () => random });
  const nearlyOne = 1 - Number.EPSILON;
  it("without Retry-After: full jitter, anywhere from 0 up to a step that doubles per attempt", () => {
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, undefined, opts(0)))).toEqual([0, 0, 0, 0]);
    expect([1, 2, 3, 4].map((n) => retryDelayMs(n, undefined, opts(nearlyOne)))).toEqual([
      249, 499, 999, 1999,
    ]);
    expect(retryDelayMs(3, undefined, opts(0.5))).toBe(500);
  });
  it("its own step never grows past the cap", () => {
    expect(retryDelayMs(10, undefined, opts(nearlyOne))).toBe(4999);
  });
  it("with Retry-After: never sooner than the server said, spread over as long again above it", () => {
    expect(retryDelayMs(1, 1000, opts(0))).toBe(1000);
    expect(retryDelayMs(1, 1000, opts(0.5))).toBe(1500);
    expect(retryDelayMs(1, 1000, opts(nearlyOne))).toBe(1999);
    // A short Retry-After late in the attempts spreads over the (longer) backoff step.
    expect(retryDelayMs(5, 1000, opts(0.5))).toBe(3000);
  });
  it("no cap on the server's word: Retry-After 30 s is never asked again before 30 s", () => {
    expect(retryDelayMs(1, 30_000, opts(0))).toBe(30_000);
    expect(retryDelayMs(1, 30_000, opts(nearlyOne))).toBe(59_999);
  });
  it("a crowd refused at once with the same Retry-After comes back spread out, none early", () => {
    const delays = Array.from({ length: 1000 }, () =>
      retryDelayMs(1, 5000, { baseDelayMs: 250, maxDelayMs: 5000 }),
    );
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(5000);
    expect(Math.max(...delays)).toBeLessThan(10_000);
    // Spread: no one-second slice of the window holds more than a third of the crowd.
    const perSecond = new Map<number, number>();
    for (const d of delays)
      perSecond.set(Math.floor(d / 1000), (perSecond.get(Math.floor(d / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBeLessThan(1000 / 3);
  });
});

describe("which failures are sent again with the same key", () => {
  it.each([
    [
      "a lost request or response",
      TRPCClientError.from(new TypeError("Failed to fetch")),
      { retry: true, reason: "network" },
    ],
    [
      "409 request_in_progress",
      httpError(409, "request_in_progress", { "Retry-After": "1" }),
      { retry: true, reason: "request_in_progress", retryAfterMs: 1000 },
    ],
    [
      "503 store_unavailable",
      httpError(503, "store_unavailable", { "Retry-After": "2" }),
      { retry: true, reason: "store_unavailable", retryAfterMs: 2000 },
    ],
    [
      "503 store_busy",
      httpError(503, "store_busy", { "Retry-After": "1" }),
      { retry: true, reason: "store_busy", retryAfterMs: 1000 },
    ],
    [
      "503 commit_unconfirmed",
      httpError(503, "commit_unconfirmed"),
      { retry: true, reason: "commit_unconfirmed" },
    ],
    [
      "a 503 from a proxy, without a reason",
      httpError(503, undefined),
      { retry: true, reason: "service_unavailable" },
    ],
  ])("retries %s", (_name, error, expected) => {
    expect(classifyFailure(error)).toMatchObject(expected);
  });

  it.each([
    ["409 unique_violation", httpError(409, "unique_violation")],
    ["409 for any other reason", httpError(409, "something_else")],
    ["412 out_of_stock", httpError(412, "out_of_stock")],
    ["422 idempotency_key_reused", httpError(422, "idempotency_key_reused")],
    ["429 too_many_keys", httpError(429, "too_many_keys", { "Retry-After": "60" })],
    ["400 invalid input", httpError(400, "invalid_input")],
    ["401", httpError(401, undefined)],
    ["500", httpError(500, undefined)],
  ])("never retries the final answer %s", (_name, error) => {
    expect(classifyFailure(error).retry).toBe(false);
  });

  it("does not retry what the caller aborted", () => {
    expect(classifyFailure(new DOMException("AbortError", "AbortError")).retry).toBe(false);
    expect(
      classifyFailure(TRPCClientError.from(new DOMException("AbortError", "AbortError"))).retry,
    ).toBe(false);
  });
});

describe("headers", () => {
  it("a mutation carries its key and Prefer: wait; a query nothing", () => {
    expect(
      idempotencyHeaders({ op: { type: "mutation", context: { idempotencyKey: "k1" } } }),
    ).toEqual({ "Idempotency-Key": "k1", Prefer: "wait=10" });
    expect(
      idempotencyHeaders({ op: { type: "query", context: { idempotencyKey: "k1" } } }),
    ).toEqual({});
  });
  it("a batch is fine for queries and refused when it holds a mutation", () => {
    expect(idempotencyHeaders({ opList: [{ type: "query" }, { type: "query" }] })).toEqual({});
    expect(() => idempotencyHeaders({ opList: [{ type: "query" }, { type: "mutation" }] })).toThrow(
      /batching link/,
    );
  });
});

class MemoryStorage implements KeyValueStorage {
  readonly map = new Map<string, string>();
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

describe("fingerprintOf", () => {
  it("ignores key order and tells values apart", () => {
    expect(fingerprintOf({ a: 1, b: { c: [1, 2], d: "x" } })).toBe(
      fingerprintOf({ b: { d: "x", c: [1, 2] }, a: 1 }),
    );
    expect(fingerprintOf({ a: 1 })).not.toBe(fingerprintOf({ a: 2 }));
    expect(fingerprintOf({ at: new Date(1) })).not.toBe(fingerprintOf({ at: new Date(2) }));
    expect(fingerprintOf(new Map([["a", 1]]))).not.toBe(fingerprintOf(new Map([["a", 2]])));
    expect(fingerprintOf({ n: 1n })).not.toBe(fingerprintOf({ n: 2n }));
    expect(fingerprintOf(undefined)).toMatch(/^[0-9a-f]{14}$/);
  });
});

describe("one key per intent", () => {
  let n = 0;
  const keys = (storage?: KeyValueStorage, now = () => 1_000) =>
    createIntentKeys({ newKey: () => `key-${++n}`, storage, now });

  it("the same input before a final answer keeps its key, whatever the key order", () => {
    const intent = keys();
    const first = intent.begin({ name: "hello", tags: ["a"] }).key;
    expect(intent.begin({ tags: ["a"], name: "hello" }).key).toBe(first);
  });

  it("another input is a new intent with a new key", () => {
    const intent = keys();
    const first = intent.begin({ name: "hello" }).key;
    expect(intent.begin({ name: "hello!" }).key).not.toBe(first);
  });

  it("a final answer ends the intent: the same input is then a new key", () => {
    const intent = keys();
    const first = intent.begin({ name: "hello" }).key;
    intent.settle({ name: "hello" });
    expect(intent.pending()).toBeNull();
    expect(intent.begin({ name: "hello" }).key).not.toBe(first);
  });

  it("a final answer for an older input leaves the pending one alone", () => {
    const intent = keys();
    const b = intent.begin({ name: "b" }).key;
    intent.settle({ name: "a" });
    expect(intent.pending()?.key).toBe(b);
  });

  it("takes the caller's key for a new intent, and keeps the pending one's", () => {
    const intent = keys();
    expect(intent.begin({ cart: 1 }, "revision-1").key).toBe("revision-1");
    expect(intent.begin({ cart: 1 }, "revision-2").key).toBe("revision-1");
  });

  it("in a storage, a reload (a new tracker on the same storage) finds the pending intent", () => {
    const storage = new MemoryStorage();
    const key = keys(storage).begin({ name: "hello" }).key;
    expect(keys(storage).pendingFor({ name: "hello" })?.key).toBe(key);
    expect(keys(storage).pendingFor({ name: "other" })).toBeNull();
    expect([...storage.map.values()].join()).not.toContain("hello"); // only a fingerprint is stored
  });

  it("forgets an intent older than maxAgeMs, and garbage in the storage", () => {
    const storage = new MemoryStorage();
    keys(storage, () => 0).begin({ name: "hello" });
    expect(createIntentKeys({ storage, maxAgeMs: 10, now: () => 11 }).pending()).toBeNull();
    storage.setItem("once.idempotency.intent", "{not json");
    expect(keys(storage).pending()).toBeNull();
  });

  it("keeps working in memory when the storage throws", () => {
    const broken: KeyValueStorage = {
      getItem: () => {
        throw new Error("SecurityError");
      },
      setItem: () => {
        throw new Error("QuotaExceededError");
      },
      removeItem: () => {},
    };
    const intent = keys(broken);
    const key = intent.begin({ name: "hello" }).key;
    expect(intent.begin({ name: "hello" }).key).toBe(key);
  });
});

describe("the client's import graph", () => {
  /** Every module a file imports at run time (type-only imports are erased first), recursively. */
  async function runtimeImports(
    file: string,
    found = new Set<string>(),
    visited = new Set<string>(),
  ): Promise<Set<string>> {
    if (visited.has(file)) return found;
    visited.add(file);
    const js = ts.transpileModule(await readFile(file, "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    for (const [, specifier] of js.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gm)) {
      if (!specifier!.startsWith(".")) found.add(specifier!);
      else
        await runtimeImports(
          path.resolve(path.dirname(file), specifier!.replace(/\.js$/, ".ts")),
          found,
          visited,
        );
    }
    return found;
  }
  const src = path.resolve(import.meta.dirname, "../src/client");

  const pkg = path.resolve(src, "..");
  /** Outside src/client/, only these pure tables may be imported: they hold no server code. */
  const SHARED = ["constants.ts", "reasons.ts"];

  it("the link imports only tRPC's observable and the pure tables: no server code, no database, no React", async () => {
    const visited = new Set<string>();
    expect([...(await runtimeImports(path.join(src, "index.ts"), new Set(), visited))]).toEqual([
      "@trpc/server/observable",
    ]);
    const outside = [...visited]
      .filter((f) => !f.startsWith(src + path.sep))
      .map((f) => path.relative(pkg, f));
    expect(outside.sort()).toEqual(SHARED);
  });
  it("the hook adds React, nothing else", async () => {
    expect([...(await runtimeImports(path.join(src, "react.ts")))].sort()).toEqual(["react"]);
  });
});
