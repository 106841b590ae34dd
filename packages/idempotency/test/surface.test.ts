// The main entry stays small: what an app adopting the engine needs, at most 15 names with types;
// the rest lives in subpaths. And the engine's insides are not part of its type.
import { readFile } from "node:fs/promises";
import { describe, expect, expectTypeOf, it } from "vitest";
import * as main from "../src/index";
import type { IdempotencyEngine } from "../src/index";

/** Every name `src/index.ts` exports, types included, read from its export lists. */
async function exportedNames(): Promise<string[]> {
  const source = await readFile(new URL("../src/index.ts", import.meta.url), "utf8");
  const lists = [...source.matchAll(/^export (?:type )?\{([^}]*)\}/gm)].map((m) => m[1]!);
  return lists.flatMap((list) => list.split(",").map((name) => name.replace(/^\s*type\s+/, "").trim())).filter(Boolean);
}

describe("the main entry", () => {
  it("exports at most 15 names, types included, and every runtime one is really there", async () => {
    const names = await exportedNames();
    expect(names.length).toBeLessThanOrEqual(15);
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(Object.keys(main)));
    expect(Object.keys(main).sort()).toEqual(
      [
        "createIdempotencyEngine",
        "createIdempotencyMiddleware",
        "DeterministicError",
        "fetchHttpAccess",
        "IdempotencyError",
        "reasonOf",
        "UniqueViolationError",
        "withIdempotency",
      ].sort(),
    );
  });

  it("keeps the engine's insides off its type: execute is the way in", () => {
    expectTypeOf<IdempotencyEngine>().not.toHaveProperty("deps");
    expectTypeOf<IdempotencyEngine>().toHaveProperty("execute");
  });
});
