// `next` after sign-in: every known way to turn a path into another site stays on ours. The
// check is WHATWG URL resolution (what browsers do with a Location header) against our origin.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { safeNextPath } from "./safe-next";

const ORIGIN = "https://shop.example";
/** Where a browser goes with `Location: <value>` from our origin. */
const landsOn = (location: string) => new URL(location, ORIGIN).origin;

describe("safeNextPath", () => {
  it.each([
    ["/\\evil.example", "backslash: browsers read /\\ as //"],
    ["/\t/evil.example", "a tab (what /%09/ decodes to) is dropped by browsers"],
    ["/%09/evil.example", "the same, still percent-encoded"],
    ["/\n/evil.example", "a newline"],
    ["/%5Cevil.example", "an encoded backslash"],
    ["/%2F/evil.example", "an encoded second slash"],
    ["//evil.example", "protocol-relative"],
    ["///evil.example", "three slashes"],
    ["https://evil.example", "absolute"],
    ["javascript:alert(1)", "script URL"],
    ["evil.example", "relative, not a path"],
    ["", "empty"],
    ["/%", "malformed percent-encoding"],
  ])("%j (%s) becomes /", (value) => {
    expect(safeNextPath(value, ORIGIN)).toBe("/");
  });

  it("keeps a path on this site with its query and fragment", () => {
    expect(safeNextPath("/orders?page=2#latest", ORIGIN)).toBe("/orders?page=2#latest");
    expect(safeNextPath("/admin/keys/abc", ORIGIN)).toBe("/admin/keys/abc");
  });

  it("anything that is not a string is /", () => {
    expect(safeNextPath(undefined, ORIGIN)).toBe("/");
    expect(safeNextPath(["/cart"], ORIGIN)).toBe("/");
  });

  it("whatever it is given, the result is a path that a browser resolves to this origin", () => {
    const tricky = fc.constantFrom("/", "//", "\\", "/\\", "%09", "%2F", "%5C", "\t", "\n", "\r", ":", "@", "evil.example", "https:", ".", "..", "?", "#");
    const input = fc.oneof(
      fc.string(),
      fc.array(fc.oneof(tricky, fc.string({ maxLength: 3 })), { maxLength: 8 }).map((parts) => parts.join("")),
    );
    fc.assert(
      fc.property(input, (value) => {
        const next = safeNextPath(value, ORIGIN);
        return next.startsWith("/") && !next.startsWith("//") && landsOn(next) === ORIGIN;
      }),
      { numRuns: 5000 },
    );
  });
});
