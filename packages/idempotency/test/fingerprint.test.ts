import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { canonicalJson, fingerprint } from "../src/fingerprint";

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value && typeof value === "object") {
    const entries = Object.entries(value);
    const rotated = entries.map((_, i) => entries[(i + seed) % entries.length]!);
    return Object.fromEntries(rotated.map(([k, v]) => [k, shuffleKeys(v, seed + 1)]));
  }
  return value;
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

  it("does not change when the same input is serialised in another key order", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(5), (input, seed) => {
        const reordered = JSON.parse(JSON.stringify(shuffleKeys(input, seed)));
        expect(fingerprint("p", reordered)).toBe(fingerprint("p", input));
      }),
    );
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
});
