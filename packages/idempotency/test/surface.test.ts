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
  return lists
    .flatMap((list) => list.split(",").map((name) => name.replace(/^\s*type\s+/, "").trim()))
    .filter(Boolean);
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
        "DeterministicError",
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

/**
 * Every package a module loads at run time, following its relative imports (type-only ones load
 * nothing).
 */
async function runtimePackagesOf(entry: URL): Promise<Set<string>> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = async (file: URL) => {
    if (seen.has(file.href)) return;
    seen.add(file.href);
    const source = await readFile(file, "utf8");
    for (const [, specifier] of source.matchAll(
      /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+"([^"]+)"/gm,
    )) {
      if (specifier!.startsWith("."))
        await visit(new URL(specifier!.replace(/\.js$/, ".ts"), file));
      else packages.add(specifier!);
    }
  };
  await visit(entry);
  return packages;
}

describe("entry points and tRPC", () => {
  it.each([
    "index.ts",
    "http/index.ts",
    "entry/jobs.ts",
    "entry/operator.ts",
    "entry/sql.ts",
    "entry/config.ts",
    "reasons.ts",
  ])("%s loads without @trpc/* (an optional peer)", async (entry) => {
    const packages = await runtimePackagesOf(new URL(`../src/${entry}`, import.meta.url));
    expect([...packages].filter((name) => name.startsWith("@trpc/"))).toEqual([]);
  });

  it("the tRPC middleware is behind @once/idempotency/trpc", async () => {
    const packages = await runtimePackagesOf(new URL("../src/entry/trpc.ts", import.meta.url));
    expect(packages).toContain("@trpc/server/unstable-core-do-not-import");
  });
});
