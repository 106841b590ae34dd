// The installed tarball loads without tRPC: every entry point but the tRPC and client ones imports
// in plain Node, where @trpc/server cannot be found (and the NestJS adapter, which needs Nest's
// decorators at run time: an app that has no Nest has no use for it). Node would find the repository's own
// node_modules above this folder, so the imports run from a folder of their own in the system's
// temporary directory that links this project's node_modules (--preserve-symlinks: resolved from
// the link, never from the repository).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const app = path.resolve(import.meta.dirname, "..");
const outside = mkdtempSync(path.join(os.tmpdir(), "once-example-plain-entries-"));
symlinkSync(path.join(app, "node_modules"), path.join(outside, "node_modules"));
afterAll(() => rmSync(outside, { recursive: true, force: true }));

const TRPC_ONLY = ["./trpc", "./client", "./client/react", "./package.json"];
const NEST_ONLY = ["./nestjs"];
const { exports } = JSON.parse(
  readFileSync(path.join(app, "node_modules", "@once", "idempotency", "package.json"), "utf8"),
) as {
  exports: Record<string, unknown>;
};
const entries = Object.keys(exports)
  .filter((entry) => !TRPC_ONLY.includes(entry) && !NEST_ONLY.includes(entry))
  .map((entry) => `@once/idempotency${entry.slice(1)}`);

/** Runs an ES module script in Node from the outside folder; its output, or the error's message. */
function node(script: string): string {
  try {
    return execFileSync(
      process.execPath,
      ["--preserve-symlinks", "--input-type=module", "-e", script],
      { cwd: outside, encoding: "utf8", stdio: "pipe" },
    );
  } catch (error) {
    return String((error as { stderr?: string }).stderr);
  }
}

describe("@once/idempotency without tRPC", () => {
  it("has no @trpc/* in this project: not in its lock, not resolvable", () => {
    expect(readFileSync(path.join(app, "package-lock.json"), "utf8")).not.toContain("@trpc/");
    expect(node(`import.meta.resolve("@trpc/server")`)).toContain(
      "Cannot find package '@trpc/server'",
    );
    // The check can fail: the tRPC entry, which needs @trpc/server, does not load here.
    expect(node(`await import("@once/idempotency/trpc")`)).toContain(
      "Cannot find package '@trpc/server'",
    );
  });

  it("leaves out only the NestJS adapter, which names @nestjs/common (not installed here)", () => {
    expect(node(`await import("@once/idempotency/nestjs")`)).toContain(
      "Cannot find package '@nestjs/common'",
    );
  });

  it.each(entries)("imports %s", (entry) => {
    expect(
      node(
        `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).length > 0 ? "loaded" : "empty");`,
      ),
    ).toBe("loaded\n");
  });

  it("covers the main entry, /http and the Express and Fastify adapters", () => {
    expect(entries).toEqual(
      expect.arrayContaining([
        "@once/idempotency",
        "@once/idempotency/http",
        "@once/idempotency/express",
        "@once/idempotency/fastify",
      ]),
    );
  });
});
