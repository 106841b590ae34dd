import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseIdempotencyKey } from "../src/key";

describe("Idempotency-Key syntax", () => {
  it.each([
    ["abc", "abc"],
    ["  order-123  ", "order-123"],
    ['"abc"', "abc"],
    ['"a\\"b\\\\c"', 'a"b\\c'],
    ["x".repeat(255), "x".repeat(255)],
    ["550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"],
  ])("accepts %j as %j", (header, key) => {
    expect(parseIdempotencyKey(header)).toEqual({ ok: true, key });
  });

  it.each([undefined, null, "", "   "])("reports %j as missing", (header) => {
    expect(parseIdempotencyKey(header)).toMatchObject({
      ok: false,
      reason: "idempotency_key_missing",
    });
  });

  it.each([
    ["x".repeat(256), "longer than 255"],
    ["has space", "visible ASCII"],
    ["tab\there", "visible ASCII"],
    ["clé", "visible ASCII"],
    ['""', "empty"],
    ['"unterminated', "RFC 8941"],
    ['"bad \\x escape"', "RFC 8941"],
  ])("rejects %j (%s)", (header, message) => {
    const parsed = parseIdempotencyKey(header);
    expect(parsed).toMatchObject({ ok: false, reason: "idempotency_key_invalid" });
    expect(parsed.ok ? "" : parsed.message).toContain(message);
  });

  it("reads back any visible-ASCII key sent as an RFC 8941 string", () => {
    const key = fc.stringMatching(/^[\x21-\x7e]{1,255}$/);
    fc.assert(
      fc.property(key, (k) => {
        const quoted = `"${k.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
        expect(parseIdempotencyKey(quoted)).toEqual({ ok: true, key: k });
        // Bare form too, unless it begins with a quote: then it must be sent quoted (see key.ts).
        if (!k.startsWith('"')) expect(parseIdempotencyKey(k)).toEqual({ ok: true, key: k });
      }),
    );
  });
});
