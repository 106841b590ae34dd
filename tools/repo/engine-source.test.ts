// No stale build: inside this repository `@once/idempotency` is the engine's source. tsconfig.json
// maps each of the package's entries to its file in packages/idempotency/src, and every tool that
// runs the app reads that map: tsc, tsx (scripts, workers, the soak), Next.js (`next dev`, `next
// build`) and Vitest (`resolve.tsconfigPaths`). So an edit to packages/idempotency/src is what the
// next test, script or page load runs, with no `npm run build:engine` in between. The package's
// own exports (dist/, what `npm pack` ships to the examples and to adopters) are untouched.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PACKAGE = "packages/idempotency";

const exportsMap = (
  JSON.parse(readFileSync(path.join(ROOT, PACKAGE, "package.json"), "utf8")) as {
    exports: Record<string, unknown>;
  }
).exports;
// tsconfig.json is JSON without comments here; a comment in it would fail this parse, loudly.
const paths = (
  JSON.parse(readFileSync(path.join(ROOT, "tsconfig.json"), "utf8")) as {
    compilerOptions: { paths: Record<string, string[]> };
  }
).compilerOptions.paths;

/**
 * Each code entry of the package: its specifier and the source file its built `import` target comes
 * from.
 */
const entries = Object.entries(exportsMap).flatMap(([subpath, target]) => {
  if (typeof target !== "object" || target === null || !("import" in target)) return []; // "./package.json"
  const built = (target as { import: string }).import; // ./dist/entry/jobs.js
  const source = built.replace(/^\.\/dist\//, "./src/").replace(/\.js$/, ".ts"); // ./src/entry/jobs.ts
  return [
    {
      specifier: `@once/idempotency${subpath.slice(1)}`,
      source: `./${PACKAGE}/${source.slice(2)}`,
    },
  ];
});

/**
 * The entries this app can load: an entry that imports an optional peer at run time (the NestJS
 * adapter imports `@nestjs/common`) needs that peer, which the shop does not install; the example
 * apps load those entries from the tarball with their framework beside them.
 */
const packageJson = JSON.parse(readFileSync(path.join(ROOT, PACKAGE, "package.json"), "utf8")) as {
  peerDependencies: Record<string, string>;
};
const absentPeers = Object.keys(packageJson.peerDependencies).filter(
  (name) => !existsSync(path.join(ROOT, "node_modules", name)),
);
const importsAbsentPeer = (source: string) => {
  const text = readFileSync(path.join(ROOT, source), "utf8");
  return absentPeers.some((name) => new RegExp(`^import (?!type )[^;]*"${name}";`, "m").test(text));
};
const loadable = entries.filter(({ source }) => !importsAbsentPeer(source));

describe("the app runs the engine's source, not its build", () => {
  it("leaves out only entries whose framework the shop does not install", () => {
    expect(entries.filter((entry) => !loadable.includes(entry)).map((e) => e.specifier)).toEqual([
      "@once/idempotency/nestjs",
    ]);
  });

  it("tsconfig.json maps every entry of the package, and nothing else, to its source file", () => {
    expect(entries.length).toBeGreaterThan(5);
    for (const { specifier, source } of entries) {
      expect(paths[specifier], `tsconfig.json paths["${specifier}"]`).toEqual([source]);
      expect(existsSync(path.join(ROOT, source)), source).toBe(true);
    }
    const mapped = Object.keys(paths).filter((key) => key.startsWith("@once/idempotency"));
    expect(mapped.sort()).toEqual(entries.map((e) => e.specifier).sort());
  });

  it.each(loadable)("Vitest: $specifier is $source", async ({ specifier, source }) => {
    const viaPackage = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>;
    const fromSource = (await import(/* @vite-ignore */ path.join(ROOT, source))) as Record<
      string,
      unknown
    >;
    // The same module instance: every export is the very same value, not a copy built from it.
    expect(Object.keys(viaPackage).length).toBeGreaterThan(0);
    for (const name of Object.keys(fromSource))
      expect(viaPackage[name], name).toBe(fromSource[name]);
  });

  it("tsx (npm run dev, the scripts, the workers they start): every entry is its source file", async () => {
    // `node --import tsx`, as scripts/lib/payment-worker.ts starts the worker, from the project
    // root.
    const probe = `
      const entries = ${JSON.stringify(loadable)};
      const stale = [];
      for (const { specifier, source } of entries) {
        const a = await import(specifier), b = await import(${JSON.stringify(ROOT)} + "/" + source);
        if (Object.keys(b).some((name) => a[name] !== b[name])) stale.push(specifier);
      }
      console.log(JSON.stringify(stale));`;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", probe],
      { cwd: ROOT },
    );
    expect(JSON.parse(stdout)).toEqual([]);
  });
});
