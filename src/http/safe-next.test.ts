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
    ["/.//evil.example", "a dot segment before //: resolved, it is //evil.example"],
    ["/a/..//evil.example", "a parent segment before //"],
    ["/%2e//evil.example", "an encoded dot segment"],
    ["/%2E%2E//evil.example", "an encoded parent segment"],
    ["/./%2e/..//evil.example", "several"],
    ["/%252e//evil.example", "a doubly encoded dot"],
    ["/.\\evil.example", "a dot segment before a backslash"],
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
    const tricky = fc.constantFrom(
      ...[
        "/",
        "//",
        "\\",
        "/\\",
        "%09",
        "%2F",
        "%2f",
        "%5C",
        "%5c",
        "\t",
        "\n",
        "\r",
        ":",
        "@",
        "evil.example",
        "https:",
        "?",
        "#",
      ],
      ...[
        ".",
        "..",
        "%2e",
        "%2E",
        "%2e%2e",
        ".%2e",
        "%252e",
        "%25",
        "/./",
        "/../",
        "a/",
        "%00",
        "%E0%A4%A",
      ],
    );
    const parts = fc
      .array(fc.oneof(tricky, fc.string({ maxLength: 3 })), { maxLength: 10 })
      .map((p) => p.join(""));
    // Most inputs start with "/" (anything else is refused at once), so the dot segments and
    // encodings after it get explored.
    const input = fc.oneof(
      fc.string(),
      parts,
      parts.map((p) => `/${p}`),
    );
    fc.assert(
      fc.property(input, (value) => {
        const next = safeNextPath(value, ORIGIN);
        // A browser drops tabs and newlines, and reads a backslash as a slash, before resolving.
        const asBrowserReads = next.replace(/[\t\n\r]/g, "").replace(/\\/g, "/");
        return (
          next.startsWith("/") &&
          !asBrowserReads.startsWith("//") &&
          landsOn(next) === ORIGIN &&
          landsOn(asBrowserReads) === ORIGIN
        );
      }),
      { numRuns: 20_000 },
    );
  });
});
