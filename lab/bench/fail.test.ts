// A bench that fails says what failed and exits non-zero, whichever way the error comes: thrown
// in its main, thrown from a timer (outside any promise), or a promise rejected with nobody
// awaiting it. Each case runs a real bench process.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";

const FAIL_MODULE = path.resolve(import.meta.dirname, "fail.ts");

function runScript(body: string): Promise<{ code: number | null; stderr: string }> {
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), "once-bench-fail-")), "bench.mts");
  writeFileSync(
    file,
    `import { runBench } from ${JSON.stringify(FAIL_MODULE)};\nawait runBench("bench:test", async (step) => {\n${body}\n});\n`,
  );
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", file],
      { cwd: path.resolve(import.meta.dirname, "../..") },
      (error, _stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stderr });
      },
    );
  });
}

// In the last two cases main never ends on its own (an interval keeps the process alive): only the
// failure, reported by runBench, may end it.
describe("runBench", () => {
  it.each([
    ["thrown in main", `step("phase two"); throw new Error("the database went away");`],
    [
      "thrown from a callback outside main's promise chain",
      `step("phase two"); setImmediate(() => { throw new Error("the database went away"); }); await new Promise(() => setInterval(() => {}, 60_000));`,
    ],
    [
      "a promise rejected with nobody awaiting it",
      `step("phase two"); void Promise.reject(new Error("the database went away")); await new Promise(() => setInterval(() => {}, 60_000));`,
    ],
  ])("%s: prints the step and the error, exits 1", async (_case, body) => {
    const { code, stderr } = await runScript(body);
    expect(code).toBe(1);
    expect(stderr).toContain('[bench:test] FAILED during "phase two":');
    expect(stderr).toContain("Error: the database went away");
  });

  it("exits 0 when the bench finishes", async () => {
    expect((await runScript(`step("only phase");`)).code).toBe(0);
  });
});
