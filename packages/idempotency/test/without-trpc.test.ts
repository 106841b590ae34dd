// The built package in an app without tRPC: every entry point an app without it would use loads
// with only the package's own dependency (zod) and pg beside it; the tRPC one does not (the
// control: proves @trpc/server is really absent there). Each import runs in a Node process of its
// own, from a node_modules that holds only those packages.
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const pkg = path.resolve(import.meta.dirname, "..");
const repoModules = path.resolve(pkg, "../../node_modules");
const TSC = path.join(repoModules, ".bin", "tsc");
let app: string;

beforeAll(async () => {
  app = await mkdtemp(path.join(os.tmpdir(), "once-no-trpc-"));
  const installed = path.join(app, "node_modules/@once/idempotency");
  await mkdir(installed, { recursive: true });
  // The package as `npm pack` builds it (tsconfig.build.json), compiled from today's source into
  // the app's copy: the repository keeps no dist/ (the app runs the source), so nothing stale is
  // tested.
  execFileSync(
    TSC,
    [
      "-p",
      path.join(pkg, "tsconfig.build.json"),
      "--outDir",
      path.join(installed, "dist"),
      "--declaration",
      "false",
      "--declarationMap",
      "false",
      "--sourceMap",
      "false",
    ],
    {
      stdio: "pipe",
    },
  );
  await cp(path.join(pkg, "package.json"), path.join(installed, "package.json"));
  for (const dependency of [
    "zod",
    "pg",
    "pg-types",
    "pg-protocol",
    "pg-pool",
    "pg-connection-string",
    "pgpass",
    "pg-int8",
    "postgres-array",
    "postgres-bytea",
    "postgres-date",
    "postgres-interval",
    "xtend",
    "split2",
  ]) {
    if (existsSync(path.join(repoModules, dependency)))
      await symlink(path.join(repoModules, dependency), path.join(app, "node_modules", dependency));
  }
  await writeFile(
    path.join(app, "package.json"),
    JSON.stringify({ name: "no-trpc", type: "module", private: true }),
  );
});
afterAll(async () => {
  if (app) await rm(app, { recursive: true, force: true });
});

function load(entry: string): { ok: true } | { ok: false; error: string } {
  try {
    execFileSync(
      process.execPath,
      ["--input-type=module", "-e", `await import(${JSON.stringify(entry)})`],
      { cwd: app, stdio: "pipe" },
    );
    return { ok: true };
  } catch (error) {
    return { ok: false, error: String((error as { stderr?: Buffer }).stderr ?? error) };
  }
}

describe("@once/idempotency without @trpc/server installed", () => {
  it.each([
    "@once/idempotency",
    "@once/idempotency/http",
    "@once/idempotency/jobs",
    "@once/idempotency/operator",
    "@once/idempotency/sql",
    "@once/idempotency/config",
    "@once/idempotency/reasons",
  ])("%s loads", (entry) => {
    expect(load(entry)).toEqual({ ok: true });
  });

  it("@once/idempotency/trpc does not (the control: tRPC is really absent here)", () => {
    const result = load("@once/idempotency/trpc");
    expect(result.ok).toBe(false);
    expect(result.ok ? "" : result.error).toMatch(/Cannot find package '@trpc\/server'/);
  });
});
