// A short list of settings: the environment variables the code reads (tools/repo/env-names.ts
// finds them in every tracked source file: the examples, the labs and the tests included) stay
// few, each spelled out where it is read; and every one the server and the worker read is in
// the operations guide's reference table, which names nothing that is no longer read.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { envNamesIn } from "./env-names";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** The issue "lighter" set it: more settings than this and nobody can tell which matter. */
const MAX_VARIABLES = 60;

const SOURCE = /\.(ts|tsx|js|cjs|mjs)$/;
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter((f) => SOURCE.test(f) && !f.split("/").includes("node_modules"))
  // The scanner and this file name variables only to find them.
  .filter((f) => !f.startsWith("tools/repo/env-names") && f !== "tools/repo/settings.test.ts");
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");
const scanned = new Map(tracked.map((f) => [f, envNamesIn(f, read(f))]));

/** Every variable name the code reads, with the files that read it. */
function allNames(): Map<string, string[]> {
  const names = new Map<string, string[]>();
  for (const [file, found] of scanned)
    for (const name of found.names) names.set(name, [...(names.get(name) ?? []), file]);
  return names;
}

/**
 * What the server and the worker run: `npm run dev` / `npm start` (scripts/serve.ts, the front
 * door, Next.js's instrumentation and config, the simulated provider they start) and `npm run
 * worker`.
 */
const COMMANDS = [
  "scripts/serve.ts",
  "scripts/front-door.ts",
  "src/instrumentation.ts",
  "next.config.js",
  "services/provider/main.ts",
  "scripts/worker.ts",
];
/**
 * Read by the commands but set by the platform, not by an operator: Node.js's and Next.js's own,
 * the shell's, and the XDG base directory the embedded data folder defaults under.
 */
const PLATFORM = new Set([
  "NODE_ENV",
  "NEXT_RUNTIME",
  "NEXT_MANUAL_SIG_HANDLE",
  "PATH",
  "HOME",
  "TMPDIR",
  "XDG_DATA_HOME",
]);

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

/** A relative or `@/` import of `from`, as the tracked file it names, if it is one. */
function resolve(from: string, specifier: string): string | undefined {
  const base = specifier.startsWith("@/")
    ? path.join("src", specifier.slice(2))
    : specifier.startsWith(".")
      ? path.join(path.dirname(from), specifier)
      : undefined;
  if (base === undefined) return undefined;
  const stem = base.replace(/\.(js|mjs|cjs)$/, "");
  return [base, `${stem}.ts`, `${stem}.tsx`, `${base}/index.ts`].find(
    (f) => scanned.has(f) && existsSync(path.join(ROOT, f)),
  );
}

/** The tracked files `entries` load, themselves included, following their imports. */
function loadedBy(entries: string[]): Set<string> {
  const files = new Set<string>();
  const queue = [...entries];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    for (const [, specifier] of read(file).matchAll(IMPORT)) {
      const target = resolve(file, specifier!);
      if (target) queue.push(target);
    }
  }
  return files;
}

/** The variables docs/operations.md's "Every setting" table names (`A` / `B` rows name two). */
function referenceTable(): Set<string> {
  const doc = read("docs/operations.md");
  const section = doc.slice(doc.indexOf("## Every setting"));
  const rows = section.split("\n").filter((line) => line.startsWith("| `"));
  return new Set(
    rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!)),
  );
}

describe("the settings", () => {
  it(`are at most ${MAX_VARIABLES} environment variables, across all the code`, () => {
    const names = allNames();
    console.log(`${names.size} environment variables: ${[...names.keys()].sort().join(" ")}`);
    expect(names.size).toBeLessThanOrEqual(MAX_VARIABLES);
  });

  it("are each read by a name spelled out, so that they can be counted", () => {
    expect([...scanned.values()].flatMap((found) => found.computed)).toEqual([]);
  });

  it("the server and the worker read are all in the operations guide's reference table", () => {
    const table = referenceTable();
    const files = loadedBy(COMMANDS);
    expect(files).toContain("src/server/config.ts");
    const read = new Set([...files].flatMap((file) => [...scanned.get(file)!.names]));
    const missing = [...read].filter((name) => !PLATFORM.has(name) && !table.has(name));
    expect(missing.sort()).toEqual([]);
  });

  it("the reference table names only variables the code reads", () => {
    const names = allNames();
    expect([...referenceTable()].filter((name) => !names.has(name))).toEqual([]);
  });
});

describe("the scanner", () => {
  it("finds each way the code reads a variable, and flags a computed name", () => {
    const env = ["process", "env"].join(".");
    const found = envNamesIn(
      "example.ts",
      [
        `const a = ${env}.ONE;`,
        `const b = ${env}["TWO"];`,
        `const { THREE, FOUR: four } = ${env};`,
        `const alias = ${env}; alias.FIVE;`,
        `function f(env: Record<string, string>) { return env.SIX; }`,
        `const flag = z.enum(["0", "1"]);`,
        `const shape = { SEVEN: flag.optional(), EIGHT: "plain" };`,
        `const notASchema = { NINE: "a", TEN: 1 };`,
        `// ${env}.IN_A_COMMENT`,
        `const c = ${env}[name];`,
      ].join("\n"),
    );
    expect([...found.names].sort()).toEqual(
      ["EIGHT", "FIVE", "FOUR", "ONE", "SEVEN", "SIX", "THREE", "TWO"].sort(),
    );
    expect(found.computed).toEqual(["example.ts:10"]);
  });
});
