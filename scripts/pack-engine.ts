// `npm run pack:engine [-- <app folder>]`: builds @once/idempotency and packs it with `npm pack`
// to packages/idempotency/pack/once-idempotency.tgz (a fixed name the examples install). Given an
// app's folder, it also copies the tarball into that app's vendor/ folder and installs it there
// (saved in the app's package.json), so the app no longer depends on where this repository is.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
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

/**
 * Builds and packs the engine; returns the versioned tarball's path (a copy is at PACKED_ENGINE).
 */
export function packEngine(): string {
  const packDir = path.dirname(PACKED_ENGINE);
  run("npm", ["run", "build", "--silent"], engine);
  rmSync(packDir, { recursive: true, force: true });
  mkdirSync(packDir);
  run("npm", ["pack", "--silent", "--pack-destination", packDir], engine);
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
