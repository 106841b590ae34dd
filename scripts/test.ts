// `npm test`: everything, in the order that fails fastest — lock files, types, lint, Vitest (unit
// and integration against a real PostgreSQL), a production build, then Playwright in Debian's
// Chromium. Needs nothing but `npm install` first: a missing Chromium is installed with apt-get
// where we are root, or we stop and print the exact command.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CHROMIUM_PATH } from "../tools/chromium";
import { COUNTED, type Counts } from "./lib/test-counts";

function ensureChromium(): void {
  if (existsSync(CHROMIUM_PATH)) return;
  const command = "apt-get update && apt-get install -y chromium";
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log(`[test] Chromium is missing: ${command}`);
    execFileSync(
      "bash",
      ["-c", `${command} >/tmp/once-apt.log 2>&1 || (tail -20 /tmp/once-apt.log; exit 1)`],
      { stdio: "inherit" },
    );
    return;
  }
  console.error(
    `[test] The browser tests need Debian's Chromium at ${CHROMIUM_PATH}. Install it with:\n\n  sudo ${command}\n`,
  );
  process.exit(1);
}

const steps: [string, string[]][] = [
  // Every lock file as npm install writes it (a fresh clone's npm install changes nothing).
  ["lock", ["npx", "tsx", "scripts/lock-check.ts"]],
  ["types", ["npx", "tsc", "--noEmit"]],
  ["lint", ["npm", "run", "lint", "--silent"]],
  ["vitest", ["npx", "vitest", "run"]],
  // The engine packed with `npm pack` and installed into examples/minimal, whose tests run there.
  ["example", ["npm", "run", "example:test", "--silent", "--", "minimal"]],
  // The same tarball in examples/t3 (create-t3-app, Prisma 6): next build, next start, Chromium.
  ["t3", ["npm", "run", "example:test", "--silent", "--", "t3"]],
  // The same tarball in examples/plain (Next.js without tRPC, @once/idempotency/http): next build,
  // next start.
  ["plain", ["npm", "run", "example:test", "--silent", "--", "plain"]],
  // The same tarball in examples/servers (Hono and bare node:http): the draft conformance kit.
  ["servers", ["npm", "run", "example:test", "--silent", "--", "servers"]],
  ["build", ["npm", "run", "build", "--silent"]],
  ["playwright", ["npx", "playwright", "test"]],
  ["soak", ["npx", "tsx", "soak/run.ts", "--short", "--noBuild"]],
];

const only = process.argv.slice(2);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" };
// The runners' own JSON reports (test counts) go to a folder of ours, removed when we are done.
const reports = mkdtempSync(path.join(os.tmpdir(), "once-test-reports-"));
process.on("exit", () => rmSync(reports, { recursive: true, force: true }));

const results: { name: string; ok: boolean; seconds: number; counts?: Counts | null }[] = [];
for (const [name, [cmd, ...args]] of steps) {
  if (only.length && !only.includes(name)) continue;
  if (name === "playwright" || name === "t3") ensureChromium();
  const counter = COUNTED[name];
  const report = path.join(reports, `${name}.json`);
  const fullArgs = [...args, ...(counter?.args(report) ?? [])];
  console.log(`\n[test] ── ${name}: ${[cmd, ...fullArgs].join(" ")}`);
  const started = Date.now();
  const run = spawnSync(cmd!, fullArgs, {
    stdio: "inherit",
    env: { ...env, ...counter?.env(report) },
  });
  const counts = counter ? counter.read(report) : undefined;
  // A runner that reports failed tests has failed, whatever its exit code says.
  const ok = run.status === 0 && !(counts && counts.failed > 0);
  results.push({ name, ok, seconds: (Date.now() - started) / 1000, counts });
  if (!ok) break;
}

console.log("\n[test] summary");
const total = { passed: 0, failed: 0 };
for (const r of results) {
  let tests = "";
  if (r.counts) {
    total.passed += r.counts.passed;
    total.failed += r.counts.failed;
    tests = `${r.counts.passed} passed, ${r.counts.failed} failed${r.counts.skipped ? `, ${r.counts.skipped} skipped` : ""}`;
  } else if (r.counts === null) {
    tests = "no test counts (the runner stopped before writing its report)";
  }
  console.log(
    `  ${r.ok ? "ok  " : "FAIL"} ${r.name.padEnd(10)} ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${tests}`.trimEnd(),
  );
}
console.log(`${total.passed} passed, ${total.failed} failed`);
const failed = results.filter((r) => !r.ok).length;
process.exit(failed ? 1 : 0);
