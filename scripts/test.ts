// `npm test`: everything, in the order that fails fastest — lock files, types, lint, Vitest (unit
// and integration against a real PostgreSQL), a production build, then Playwright in Debian's
// Chromium. Needs nothing but `npm install` first: before the first stage it makes sure of the
// Debian packages the chosen stages start (Chromium, HAProxy, PgBouncer), installing them with
// apt-get where we are root, or stopping at once with the command to run.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  CHROMIUM,
  ensurePackages,
  HAPROXY,
  PGBOUNCER,
  type SystemPackage,
} from "../tools/system-packages";
import { COUNTED, summaryLine, type Counts } from "./lib/test-counts";

interface Step {
  name: string;
  command: string[];
  /** Debian packages the stage starts as processes. */
  needs?: SystemPackage[];
}

const steps: Step[] = [
  // Every lock file as npm install writes it (a fresh clone's npm install changes nothing).
  { name: "lock", command: ["npx", "tsx", "scripts/lock-check.ts"] },
  { name: "types", command: ["npx", "tsc", "--noEmit"] },
  { name: "lint", command: ["npm", "run", "lint", "--silent"] },
  // lab/bench/http/edge.test.ts runs the deployment's edge configuration in the real HAProxy.
  { name: "vitest", command: ["npx", "vitest", "run"], needs: [HAPROXY] },
  // The engine packed with `npm pack` and installed into examples/minimal, whose tests run there.
  { name: "example", command: ["npm", "run", "example:test", "--silent", "--", "minimal"] },
  // The same tarball in examples/t3 (create-t3-app, Prisma 6): next build, next start, Chromium.
  {
    name: "t3",
    command: ["npm", "run", "example:test", "--silent", "--", "t3"],
    needs: [CHROMIUM],
  },
  // The same tarball in examples/plain (Next.js without tRPC, @once/idempotency/http): next build,
  // next start.
  { name: "plain", command: ["npm", "run", "example:test", "--silent", "--", "plain"] },
  // The same tarball in examples/servers (Hono and bare node:http): the draft conformance kit.
  { name: "servers", command: ["npm", "run", "example:test", "--silent", "--", "servers"] },
  // The same tarball in examples/frameworks: Express, Fastify and NestJS apps whose existing
  // handlers the native adapters protect, each checked and run through the draft's vectors.
  {
    name: "frameworks",
    command: ["npm", "run", "example:test", "--silent", "--", "frameworks"],
  },
  { name: "build", command: ["npm", "run", "build", "--silent"] },
  { name: "playwright", command: ["npx", "playwright", "test"], needs: [CHROMIUM] },
  {
    name: "soak",
    command: ["npx", "tsx", "lab/soak/run.ts", "--short", "--noBuild"],
    needs: [HAPROXY, PGBOUNCER],
  },
];

const only = process.argv.slice(2);
const chosen = steps.filter((step) => only.length === 0 || only.includes(step.name));
ensurePackages(
  chosen.flatMap((step) => step.needs ?? []),
  "npm test",
);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" };
// The runners' own JSON reports (test counts) go to a folder of ours, removed when we are done.
const reports = mkdtempSync(path.join(os.tmpdir(), "once-test-reports-"));
process.on("exit", () => rmSync(reports, { recursive: true, force: true }));

const results: { name: string; ok: boolean; seconds: number; counts?: Counts | null }[] = [];
for (const {
  name,
  command: [cmd, ...args],
} of chosen) {
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
  // A runner that reports failed tests or files has failed, whatever its exit code says.
  const ok = run.status === 0 && !(counts && (counts.failed > 0 || counts.failedFiles.length > 0));
  results.push({ name, ok, seconds: (Date.now() - started) / 1000, counts });
  if (!ok) break;
}

console.log("\n[test] summary");
const total: Counts = { passed: 0, failed: 0, skipped: 0, failedFiles: [] };
for (const r of results) {
  let tests = "";
  if (r.counts) {
    total.passed += r.counts.passed;
    total.failed += r.counts.failed;
    total.skipped += r.counts.skipped;
    total.failedFiles.push(...r.counts.failedFiles);
    tests = summaryLine(r.counts);
  } else if (r.counts === null) {
    tests = "no test counts (the runner stopped before writing its report)";
  }
  console.log(
    `  ${r.ok ? "ok  " : "FAIL"} ${r.name.padEnd(10)} ${`${r.seconds.toFixed(1)} s`.padStart(8)}  ${tests}`.trimEnd(),
  );
  for (const file of r.counts?.failedFiles ?? []) console.log(`         failed: ${file}`);
}
console.log(summaryLine(total));
const failed = results.filter((r) => !r.ok).length;
process.exit(failed ? 1 : 0);
