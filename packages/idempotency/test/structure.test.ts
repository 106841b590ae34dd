// The engine's imports form a pyramid (.dependency-cruiser.cjs says which layer may import which),
// and `npm run lint` runs the same check. These tests prove the guard bites: a copy of the source
// with one import added that closes a cycle, or that points up a layer, fails it.
import { execFile } from "node:child_process";
import { appendFile, cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const DEPCRUISE = path.join(PACKAGE, "..", "..", "node_modules", ".bin", "depcruise");
const copies: string[] = [];
afterAll(() => Promise.all(copies.map((dir) => rm(dir, { recursive: true, force: true }))));

/** Runs the structure check in `dir` (a package folder); its exit code and report. */
async function check(dir: string): Promise<{ ok: boolean; report: string }> {
  try {
    const { stdout } = await promisify(execFile)(
      DEPCRUISE,
      ["src", "--config", ".dependency-cruiser.cjs"],
      { cwd: dir },
    );
    return { ok: true, report: stdout };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, report: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

/** A copy of the package's source and its structure rules, with `line` appended to `file`. */
async function copyWith(file: string, line: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "once-structure-"));
  copies.push(dir);
  for (const entry of ["src", ".dependency-cruiser.cjs", "tsconfig.build.json"])
    await cp(path.join(PACKAGE, entry), path.join(dir, entry), { recursive: true });
  await appendFile(path.join(dir, "src", file), `\n${line}\n`);
  return dir;
}

describe("the engine's structure", () => {
  it("has no import cycle and no upward import", async () => {
    const { ok, report } = await check(PACKAGE);
    expect(report).toContain("no dependency violations found");
    expect(ok).toBe(true);
  });

  it.each([
    {
      // protocol/execute.ts imports the store's SQL helpers; the store importing the protocol back
      // closes a circle.
      what: "closes a cycle",
      file: "store/unavailable.ts",
      line: 'export { executeIdempotently as closesACycle } from "../protocol/execute.js";',
      rule: "no-circular",
    },
    {
      what: "points up a layer",
      file: "constants.ts",
      line: 'export type { ReplayCache as PointsUp } from "./replay-cache.js";',
      rule: "base-imports-nothing-above",
    },
  ])("fails on an import that $what", async ({ file, line, rule }) => {
    const { ok, report } = await check(await copyWith(file, line));
    expect(ok).toBe(false);
    expect(report).toContain(rule);
  });
});
