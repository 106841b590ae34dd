// `npm run pack:engine [-- <app folder>]`: builds @once/idempotency on its own and packs it with
// `npm pack` to packages/idempotency/pack/once-idempotency.tgz (a fixed name the examples install).
// It does what the package's README tells an adopter (`npm install --workspaces=false && npm pack`
// in its folder: its own lock file, none of the shop's dependencies), in a copy of the folder under
// the system's temp folder, so the working tree never gets a node_modules of its own inside the
// workspace. Given an app's folder, it also copies the tarball into that app's vendor/ folder and
// installs it there (saved in the app's package.json), so the app no longer depends on where this
// repository is.
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const engine = path.join(root, "packages", "idempotency");
export const PACKED_ENGINE = path.join(engine, "pack", "once-idempotency.tgz");

function run(cmd: string, args: string[], cwd: string): void {
  console.log(`[pack] ${path.relative(root, cwd) || "."}$ ${cmd} ${args.join(" ")}`);
  execFileSync(cmd, args, {
    cwd,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" },
  });
}

/** What is built, not copied: installs, builds, tarballs and the tests' generated client. */
const NOT_COPIED = new Set(["node_modules", "dist", "pack", "generated"]);

/**
 * Builds and packs the engine from its own folder's package.json and lock alone; returns the
 * versioned tarball's path (a copy is at PACKED_ENGINE).
 */
export function packEngine(): string {
  const packDir = path.dirname(PACKED_ENGINE);
  const build = mkdtempSync(path.join(os.tmpdir(), "once-engine-build-"));
  try {
    cpSync(engine, build, {
      recursive: true,
      filter: (source) => !NOT_COPIED.has(path.basename(source)) && !source.endsWith(".tgz"),
    });
    rmSync(packDir, { recursive: true, force: true });
    mkdirSync(packDir);
    // Outside the workspace, so plain npm: the package's own lock, then `npm pack` (its prepack
    // script builds).
    run("npm", ["ci", "--no-audit", "--no-fund"], build);
    run("npm", ["pack", "--silent", "--pack-destination", packDir], build);
  } finally {
    rmSync(build, { recursive: true, force: true });
  }
  const tarball = readdirSync(packDir).find((f) => f.endsWith(".tgz"));
  if (!tarball) throw new Error("npm pack made no tarball");
  copyFileSync(path.join(packDir, tarball), PACKED_ENGINE);
  return path.join(packDir, tarball);
}

/** Copies the tarball into `app`/vendor/ and installs it from there. */
function installInto(app: string, tarball: string): void {
  if (!existsSync(path.join(app, "package.json")))
    throw new Error(
      `${app} has no package.json: give the folder of the app to install the engine into.`,
    );
  const vendor = path.join(app, "vendor");
  mkdirSync(vendor, { recursive: true });
  copyFileSync(tarball, path.join(vendor, path.basename(tarball)));
  run("npm", ["install", "--no-audit", "--no-fund", `./vendor/${path.basename(tarball)}`], app);
}

if (import.meta.filename === process.argv[1]) {
  const tarball = packEngine();
  const app = process.argv[2];
  if (app) installInto(path.resolve(process.env.INIT_CWD ?? process.cwd(), app), tarball);
  else console.log(`[pack] ${tarball}\n[pack] install it in an app with: npm install ${tarball}`);
}
