// `npm test`: everything, in the order that fails fastest — types, lint, Vitest (unit and
// integration against a real PostgreSQL), a production build, then Playwright in Debian's
// Chromium. Needs nothing but `npm install` first: a missing Chromium is installed with apt-get
// where we are root, or we stop and print the exact command.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const command = "apt-get update && apt-get install -y chromium";
  if (process.getuid?.() === 0 && existsSync("/usr/bin/apt-get")) {
    console.log(`[test] Chromium is missing: ${command}`);
    execFileSync("bash", ["-c", `${command} >/tmp/once-apt.log 2>&1 || (tail -20 /tmp/once-apt.log; exit 1)`], { stdio: "inherit" });
    return;
  }
  console.error(`[test] The browser tests need Debian's Chromium at ${CHROMIUM}. Install it with:\n\n  sudo ${command}\n`);
  process.exit(1);
}

const steps: [string, string[]][] = [
  ["types", ["npx", "tsc", "--noEmit"]],
  ["lint", ["npx", "eslint", "."]],
  ["vitest", ["npx", "vitest", "run"]],
  ["build", ["npm", "run", "build", "--silent"]],
  ["playwright", ["npx", "playwright", "test"]],
  ["soak", ["npx", "tsx", "soak/run.ts", "--short", "--noBuild"]],
];

const only = process.argv.slice(2);
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" };
const results: { name: string; ok: boolean; seconds: number }[] = [];
for (const [name, [cmd, ...args]] of steps) {
  if (only.length && !only.includes(name)) continue;
  if (name === "playwright") ensureChromium();
  console.log(`\n[test] ── ${name}: ${[cmd, ...args].join(" ")}`);
  const started = Date.now();
  const run = spawnSync(cmd!, args, { stdio: "inherit", env });
  const ok = run.status === 0;
  results.push({ name, ok, seconds: (Date.now() - started) / 1000 });
  if (!ok) break;
}

console.log("\n[test] summary");
for (const r of results) console.log(`  ${r.ok ? "ok  " : "FAIL"} ${r.name.padEnd(10)} ${r.seconds.toFixed(1)} s`);
const failed = results.filter((r) => !r.ok).length;
process.exit(failed ? 1 : 0);
