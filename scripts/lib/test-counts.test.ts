// `npm test`'s summary counts every failed test file: a real Vitest run over a file whose
// `beforeAll` throws (its test is then skipped, not failed, as when HAProxy is missing) and a file
// that passes, read back through the same counter `npm test` uses.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COUNTED, playwrightCounts, summaryLine } from "./test-counts";

const ROOT = path.resolve(import.meta.dirname, "../..");

describe("npm test's counts", () => {
  it("count a file whose setup failed, though none of its tests did", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "test-counts-"));
    writeFileSync(
      path.join(dir, "setup-fails.test.js"),
      'beforeAll(() => { throw new Error("haproxy: not found"); });\nit("is never run", () => {});\n',
    );
    writeFileSync(path.join(dir, "passes.test.js"), 'it("passes", () => {});\n');
    const report = path.join(dir, "report.json");
    const vitest = COUNTED.vitest!;
    const run = spawnSync(
      process.execPath,
      [
        path.join(ROOT, "node_modules/vitest/vitest.mjs"),
        "run",
        "--root",
        dir,
        "--globals",
        ...vitest.args(report),
      ],
      { cwd: dir, encoding: "utf8", timeout: 60_000 },
    );
    expect(run.status).toBe(1);
    const counts = vitest.read(report)!;
    // Vitest itself counts no failed test here: the file is what failed.
    expect(counts).toMatchObject({ passed: 1, failed: 0, skipped: 1 });
    expect(counts.failedFiles.map((f) => path.basename(f))).toEqual(["setup-fails.test.js"]);
    expect(summaryLine(counts)).toBe("1 passed, 0 failed, 1 skipped, 1 file failed");
  });

  it("name the Playwright files with a failed spec, nested suites included", () => {
    const counts = playwrightCounts({
      stats: { expected: 3, unexpected: 1, flaky: 0, skipped: 0 },
      suites: [
        { file: "checkout.spec.ts", specs: [{ ok: true }], suites: [] },
        {
          file: "admin.spec.ts",
          specs: [],
          suites: [{ file: "admin.spec.ts", specs: [{ ok: false }] }],
        },
      ],
    });
    expect(counts.failedFiles).toEqual(["admin.spec.ts"]);
    expect(summaryLine(counts)).toBe("3 passed, 1 failed, 1 file failed");
  });
});
