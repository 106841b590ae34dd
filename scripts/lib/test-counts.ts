// Test counts for `npm test`'s summary, read from the runners' own JSON reporters (no parsing of
// their console output): which extra arguments or environment make each runner write its report
// to a file, and how to read the counts back. A stage without an entry here simply has no counts.
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

export interface Counts {
  passed: number;
  failed: number;
  skipped: number;
  /**
   * Every test file that failed, also those whose failure is no test's (a file that does not load,
   * a `beforeAll` that throws: its tests are then skipped, not failed).
   */
  failedFiles: string[];
}

/** "849 passed, 1 failed, 2 files failed": what the summary prints for a stage, and for the run. */
export function summaryLine(c: Counts): string {
  const files = c.failedFiles.length;
  return [
    `${c.passed} passed`,
    `${c.failed} failed`,
    ...(c.skipped ? [`${c.skipped} skipped`] : []),
    ...(files ? [`${files} file${files === 1 ? "" : "s"} failed`] : []),
  ].join(", ");
}

interface Counter {
  args: (report: string) => string[];
  env: (report: string) => Record<string, string>;
  /** null when the runner wrote no report (it crashed, or was stopped, before the end). */
  read: (report: string) => Counts | null;
}

function readJson<T>(file: string): T | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as T;
  } catch {
    return null;
  }
}

export interface VitestReport {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: { name: string; status: string }[];
}

/** A Vitest JSON report's counts; exported for its test. */
export function vitestCounts(r: VitestReport): Counts {
  return {
    passed: r.numPassedTests,
    failed: r.numFailedTests,
    skipped: r.numPendingTests + r.numTodoTests,
    failedFiles: r.testResults
      .filter((file) => file.status === "failed")
      .map((file) => path.relative(process.cwd(), file.name)),
  };
}

function readVitest(report: string): Counts | null {
  const r = readJson<VitestReport>(report);
  return r && vitestCounts(r);
}

interface PlaywrightSuite {
  file: string;
  specs?: { ok: boolean }[];
  suites?: PlaywrightSuite[];
}

export interface PlaywrightReport {
  stats: { expected: number; unexpected: number; flaky: number; skipped: number };
  suites: PlaywrightSuite[];
}

function suiteFailed(s: PlaywrightSuite): boolean {
  return (s.specs ?? []).some((spec) => !spec.ok) || (s.suites ?? []).some(suiteFailed);
}

/** A Playwright JSON report's counts; exported for its test. */
export function playwrightCounts(r: PlaywrightReport): Counts {
  // A flaky test passed in the end (on a retry): it counts as passed, as Playwright's own exit
  // code does.
  return {
    passed: r.stats.expected + r.stats.flaky,
    failed: r.stats.unexpected,
    skipped: r.stats.skipped,
    failedFiles: r.suites.filter(suiteFailed).map((s) => s.file),
  };
}

/** scripts/example.ts passes the file on to the example's own Vitest run. */
const exampleVitest: Counter = {
  args: (report) => [`--vitest-json=${report}`],
  env: () => ({}),
  read: readVitest,
};

export const COUNTED: Record<string, Counter> = {
  vitest: {
    // The default reporter keeps the console as it was; the JSON one adds the file.
    args: (report) => ["--reporter=default", "--reporter=json", `--outputFile.json=${report}`],
    env: () => ({}),
    read: readVitest,
  },
  example: exampleVitest,
  // examples/t3's Vitest run, its Chromium double-click included.
  t3: exampleVitest,
  // examples/plain's Vitest run: its Route Handler against next start, its entry points without
  // tRPC.
  plain: exampleVitest,
  // examples/servers' Vitest run: the draft conformance kit against Hono and node:http.
  servers: exampleVitest,
  // examples/frameworks' Vitest run: the Express, Fastify and NestJS adapters' apps.
  frameworks: exampleVitest,
  playwright: {
    // playwright.config.ts adds its JSON reporter when this variable names a file.
    args: () => [],
    env: (report) => ({ PLAYWRIGHT_JSON_OUTPUT_FILE: report }),
    read: (report) => {
      const r = readJson<PlaywrightReport>(report);
      return r && playwrightCounts(r);
    },
  },
};
