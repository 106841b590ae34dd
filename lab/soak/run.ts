// `npm run soak`: the chaos soak, on loopback only, bounded in time and requests, stopping by
// itself. For each profile (direct, then through PgBouncer): three `next start` instances behind
// HAProxy, 64 shoppers, faults on a schedule, then the verdict checked in the database, printed as
// one table and drawn as an SVG chart (lab/soak/out/<profile>.md and .svg). Exit code 1 unless every
// profile's verdict (verdict.ts) is good. Every process it starts is stopped by its pid at the end, on error and on Ctrl-C.
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { isPatroni, parseSoakArgs } from "./config";
import { HELP } from "./help";
import { ETCD_BIN, PATRONI_BIN, PG15_BIN } from "./patroni";
import { ensurePackages, HAPROXY, PGBOUNCER } from "../../tools/system-packages";
import { stopAllChildren } from "./processes";
import { runProfile } from "./profile";
import { brokenProfile, judgeRun, type ProfileVerdict } from "./verdict";

const ROOT = path.resolve(import.meta.dirname, "../..");
const log = (m: string) => console.log(`[soak] ${m}`);

function ensureTools(patroni: boolean): void {
  if (patroni) {
    const ha = [
      ["patroni", PATRONI_BIN],
      ["etcd-server", ETCD_BIN],
      ["postgresql-15", `${PG15_BIN}/postgres`],
    ].filter(([, bin]) => !existsSync(bin!));
    if (ha.length > 0) {
      // Installing them as a side effect would start Debian's own etcd and PostgreSQL services.
      console.error(
        `[soak] The patroni profiles need Debian's ${ha.map(([name]) => name).join(", ")}, which are not installed: run .ci/run, or install them with ` +
          `\`apt-get install ${ha.map(([name]) => name).join(" ")}\` behind a /usr/sbin/policy-rc.d that exits 101 (so apt starts no service).`,
      );
      process.exit(1);
    }
  }
  ensurePackages([HAPROXY, PGBOUNCER], "npm run soak");
}

const argv = process.argv.slice(2);
const noBuild = argv.includes("--noBuild");
const keepLogs = argv.includes("--keep");
let parsed: ReturnType<typeof parseSoakArgs>;
try {
  parsed = parseSoakArgs(argv.filter((a) => a !== "--noBuild" && a !== "--keep"));
} catch (error) {
  console.error(`[soak] ${(error as Error).message} (npm run soak -- --help lists every option)`);
  process.exit(2);
}
if (parsed === "help") {
  console.log(HELP);
  process.exit(0);
}
const config = parsed;
ensureTools(config.profiles.some(isPatroni));
if (!noBuild || !existsSync(path.join(ROOT, ".next", "BUILD_ID"))) {
  log("npm run build");
  if (spawnSync("npm", ["run", "build", "--silent"], { cwd: ROOT, stdio: "inherit" }).status !== 0)
    process.exit(1);
}

let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return;
    interrupted = true;
    log(`${signal}: stopping everything this run started`);
    void stopAllChildren().finally(() => process.exit(130));
  });
}

const verdicts: ProfileVerdict[] = [];
for (const profile of config.profiles) {
  // PostgreSQL runs as the "postgres" user, which must traverse the folder (mkdtemp makes it 0700).
  const dir = mkdtempSync(path.join(os.tmpdir(), `once-soak-${profile}-`));
  chmodSync(dir, 0o755);
  log(`── profile ${profile} (logs in ${dir})`);
  try {
    const result = await runProfile(profile, config, dir, (m) => log(`[${profile}] ${m}`));
    console.log(`\n${result.report}`);
    verdicts.push(result.verdict);
    if (result.verdict.ok && !keepLogs) rmSync(dir, { recursive: true, force: true });
    else log(`logs kept in ${dir}`);
  } catch (error) {
    verdicts.push(brokenProfile(profile, error));
    console.error(
      `[soak] profile ${profile} broke: ${(error as Error).stack ?? String(error)}\n[soak] logs kept in ${dir}`,
    );
    await stopAllChildren();
  }
}
await stopAllChildren();
// The same verdicts the saved reports carry decide the last line and the exit code.
const { closing, exitCode } = judgeRun(verdicts);
log(closing);
process.exit(exitCode);
