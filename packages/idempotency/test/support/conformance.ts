// The conformance kit against routes in front of the harness's effects table (one row per
// execution, its value `<key>:<input value>`): what every such run shares, whatever the route.
import type { ConformanceTarget } from "../../src/conformance/index";
import type { TestDatabase } from "./database";

/** The kit's two callers, acme and globex (scopeOfAuthorization knows their tokens). */
export const CALLERS: [Record<string, string>, Record<string, string>] = [
  { authorization: "Bearer acme_token" },
  { authorization: "Bearer globex_token" },
];

/** `route`'s target, completed with what the kit asks of the effects table on `t`. */
export function effectsTarget(
  t: TestDatabase,
  route: Omit<ConformanceTarget, "otherInput" | "effects" | "scopes" | "databaseUrl">,
): ConformanceTarget {
  return {
    ...route,
    otherInput: (input) => ({ ...(input as object), value: "other" }),
    effects: async (key, caller = 0) =>
      t.db.testEffect.count({
        where: { scope: caller === 0 ? "acme" : "globex", value: { startsWith: `${key}:` } },
      }),
    scopes: ["acme", "globex"],
    // Read when the kit runs: the database exists only once the file's tests start.
    get databaseUrl() {
      return t.url;
    },
  };
}
