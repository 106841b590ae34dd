import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import superjson from "superjson";
import { describe, expect, it } from "vitest";
import {
  canonicalJson,
  fingerprint,
  legacyFingerprint,
  requestFingerprint,
} from "../src/fingerprint";

/** The same value with every object's keys, Set's members and Map's entries in another order. */
function reorder(value: unknown, seed: number): unknown {
  const rotate = <T>(items: T[]) => items.map((_, i) => items[(i + seed) % items.length]!);
  const again = (v: unknown) => reorder(v, seed + 1);
  if (Array.isArray(value)) return value.map(again);
  if (value instanceof Set) return new Set(rotate([...value]).map(again));
  if (value instanceof Map)
    return new Map(rotate([...value]).map(([k, v]) => [again(k), again(v)]));
  if (value && Object.getPrototypeOf(value) === Object.prototype)
    return Object.fromEntries(rotate(Object.entries(value)).map(([k, v]) => [k, again(v)]));
  return value;
}

/** What the middleware is handed with superjson: the client's value after the transformer. */
const throughSuperjson = (value: unknown): unknown =>
  superjson.deserialize(JSON.parse(JSON.stringify(superjson.serialize(value))));
/** What it is handed without a transformer: what JSON.stringify sent, parsed. */
const throughJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null");

// Small domains, so that two values drawn apart are often equal, and often a typed value beside
// its JSON form (1n and "1", a Date and its ISO string, a Set or a Map and {}, undefined and null).
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom<unknown>(null, true, 0, 1, -0, 1.5, "", "1", "a", "1970-01-01T00:00:00.000Z"),
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "c"), tie("value"), { maxKeys: 3 }),
  ),
})).value;

const typedLeaf = fc.oneof(
  fc.constantFrom<unknown>(undefined, NaN, Infinity, -Infinity, 0n, 1n, -1n),
  fc.constantFrom(0, 1).map((ms) => new Date(ms)),
  fc.constantFrom("http://a.test/", "http://b.test/x").map((href) => new URL(href)),
  fc
    .constantFrom("a", "b")
    .chain((source) => fc.constantFrom("", "g").map((flags) => new RegExp(source, flags))),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }).map((xs) => new Uint8Array(xs)),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }).map((xs) => new Int16Array(xs)),
  fc.array(fc.constantFrom(0, 0.5), { maxLength: 2 }).map((xs) => new Float64Array(xs)),
);
const rich = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom<unknown>(null, true, 0, 1, -0, "", "1", "a", "1970-01-01T00:00:00.000Z"),
    typedLeaf,
    fc.array(tie("value"), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom("a", "b", "c"), tie("value"), { maxKeys: 3 }),
    fc.array(tie("value"), { maxLength: 3 }).map((xs) => new Set(xs)),
    fc.array(fc.tuple(tie("value"), tie("value")), { maxLength: 3 }).map((es) => new Map(es)),
  ),
})).value;

/**
 * Checks `fingerprint(a) === fingerprint(b)` ⇔ a and b deeply equal once through `transport`, for
 * values drawn apart and for a value beside itself in another order; and that both answers came.
 */
function agreesWithDeepEquality(values: fc.Arbitrary<unknown>, transport: (v: unknown) => unknown) {
  const pairs = fc.oneof(
    fc.tuple(values, values),
    fc.tuple(values, fc.nat(5)).map(([a, seed]) => [a, reorder(a, seed)] as const),
  );
  const seen = { equal: 0, different: 0 };
  fc.assert(
    fc.property(pairs, ([a, b]) => {
      const [ta, tb] = [transport(a), transport(b)];
      const equal = isDeepStrictEqual(ta, tb);
      seen[equal ? "equal" : "different"]++;
      expect(fingerprint("p", ta) === fingerprint("p", tb)).toBe(equal);
    }),
    { numRuns: 1000 },
  );
  // The property is only worth something if both answers were asked for.
  expect(seen.equal).toBeGreaterThan(100);
  expect(seen.different).toBeGreaterThan(100);
}

describe("request fingerprint", () => {
  it("writes canonical JSON: keys sorted at every depth, no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: true, y: null }], c: "x" } })).toBe(
      '{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}',
    );
  });

  it("is a SHA-256 hex digest over procedure and input", () => {
    expect(fingerprint("checkout.placeOrder", { a: 1 })).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes with any value or with the procedure", () => {
    const base = { items: [{ productId: "a", quantity: 1 }] };
    expect(fingerprint("p", base)).not.toBe(
      fingerprint("p", { items: [{ productId: "a", quantity: 2 }] }),
    );
    expect(fingerprint("p", base)).not.toBe(fingerprint("q", base));
    expect(fingerprint("p", [1, 2])).not.toBe(fingerprint("p", [2, 1]));
    expect(fingerprint("p", { a: "1" })).not.toBe(fingerprint("p", { a: 1 }));
  });

  it("tells apart what JSON would not: a Set, a Map, a BigInt, a Date, undefined and their JSON forms", () => {
    const first = { tags: new Set(["a"]), m: new Map([["x", 1]]), n: 1n };
    const other = { tags: new Set(["b"]), m: new Map([["y", 2]]), n: "1" };
    expect(fingerprint("p", first)).not.toBe(fingerprint("p", other));
    const pairs: [unknown, unknown][] = [
      [new Set(["a"]), new Set(["b"])],
      [new Set(), {}],
      [new Map([["a", 1]]), { a: 1 }],
      [1n, "1"],
      [new Date(0), "1970-01-01T00:00:00.000Z"],
      [{ a: undefined }, {}],
      [[undefined], [null]],
      [-0, 0],
      [NaN, null],
      [new URL("http://a.test/"), "http://a.test/"],
      [/a/g, /a/],
      [new Uint8Array([1]), new Int8Array([1])],
      [new Error("a"), new Error("b")],
      [new (class Euro {})(), {}],
    ];
    for (const [a, b] of pairs) expect(canonicalJson(a)).not.toBe(canonicalJson(b));
  });

  it("refuses what is not data: a function, a cycle", () => {
    expect(() => fingerprint("p", { f: () => 1 })).toThrow(/function cannot be fingerprinted/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => fingerprint("p", cyclic)).toThrow(/cyclic value cannot be fingerprinted/);
    const shared = { a: 1 };
    expect(() => fingerprint("p", [shared, shared])).not.toThrow(); // shared is not cyclic
  });

  describe("with superjson: matches exactly when the values the middleware is handed are deeply equal", () => {
    it("for values drawn apart", () => agreesWithDeepEquality(rich, throughSuperjson));

    it("for a value and itself with its keys, members and entries in another order", () => {
      fc.assert(
        fc.property(rich, fc.nat(5), (value, seed) => {
          const [a, b] = [throughSuperjson(value), throughSuperjson(reorder(value, seed))];
          expect(isDeepStrictEqual(a, b)).toBe(true);
          expect(fingerprint("p", b)).toBe(fingerprint("p", a));
        }),
      );
    });

    it("and the client's value has the fingerprint of what the server is handed", () => {
      fc.assert(
        fc.property(rich, (value) => {
          expect(fingerprint("p", throughSuperjson(value))).toBe(fingerprint("p", value));
        }),
      );
    });
  });

  describe("without a transformer: matches exactly when what JSON.stringify sent is equal", () => {
    it("for values drawn apart", () => agreesWithDeepEquality(json, throughJson));

    it("for any JSON value and itself in another key order", () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.nat(5), (input, seed) => {
          const reordered = throughJson(reorder(input, seed));
          expect(fingerprint("p", reordered)).toBe(fingerprint("p", throughJson(input)));
        }),
      );
    });
  });

  describe("upgrade: keys stored under the earlier versions' fingerprint", () => {
    it("a JSON document's fingerprint is the earlier versions' (a literal of theirs)", () => {
      const input = { items: [{ productId: "p1", quantity: 2 }], note: "ring twice" };
      expect(fingerprint("checkout.placeOrder", input)).toBe(
        "116addadac609ae14fdccbec8d60aba942a9f34b783e4626e2a169a5c5640209",
      );
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          const sent = throughJson(value);
          expect(fingerprint("p", sent)).toBe(legacyFingerprint("p", sent));
        }),
      );
    });

    it("a typed input matches its earlier fingerprint as well as its own, and nothing else", () => {
      const input = { at: new Date("2026-11-24T01:02:03.456Z"), n: 1n };
      // The earlier versions' fingerprint of ("op", input): the Date as its ISO string, 1n as "1".
      const legacy = "d36bb59773a20299f87b487ace11b0543958aab798f8e96b37b30cf0cf217133";
      const print = requestFingerprint("op", input);
      expect(print.value).not.toBe(legacy);
      expect(legacyFingerprint("op", input)).toBe(legacy);
      expect(print.matches(print.value)).toBe(true);
      expect(print.matches(legacy)).toBe(true);
      expect(print.matches(fingerprint("op", { ...input, n: 2n }))).toBe(false);
      expect(print.matches(legacyFingerprint("op", { ...input, n: 2n }))).toBe(false);
    });
  });
});
