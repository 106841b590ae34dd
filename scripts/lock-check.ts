// `npm test -- lock`: every lock file is what `npm install` would write, so a fresh clone's
// `npm install` leaves the tree clean. A lock file drifts when a package.json changes and only
// `npm ci` runs afterwards (it installs from the lock and never rewrites it): the engine's
// `@prisma/client` peer range once differed between packages/idempotency/package.json and the lock.
//
// npm recomputes each lock without installing or running scripts (--package-lock-only
// --ignore-scripts), from its cache where it can (--prefer-offline); a changed lock is put back as
// it was, its difference printed, and the check fails. The committed tree is never left modified.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..");
/**
 * Folders with a package.json and the lock file `npm ci` installs from. The engine's package is
 * also a workspace of the root: `--workspaces=false` keeps npm to its own folder and lock (its
 * standalone build: `npm install --workspaces=false && npm pack` there).
 */
const PROJECTS: { dir: string; args?: string[] }[] = [
  { dir: "." },
  { dir: "packages/idempotency", args: ["--workspaces=false"] },
  { dir: "examples/minimal" },
  { dir: "examples/t3" },
  { dir: "examples/plain" },
  { dir: "examples/servers" },
  { dir: "examples/frameworks" },
];

let drifted = 0;
for (const { dir: project, args = [] } of PROJECTS) {
  const dir = path.join(ROOT, project);
  const lock = path.join(dir, "package-lock.json");
  const before = readFileSync(lock, "utf8");
  const npm = spawnSync(
    "npm",
    [
      "install",
      "--package-lock-only",
      "--ignore-scripts",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      ...args,
    ],
    {
      cwd: dir,
      encoding: "utf8",
    },
  );
  const after = readFileSync(lock, "utf8");
  if (npm.status !== 0) {
    writeFileSync(lock, before);
    console.error(`[lock] npm install --package-lock-only failed in ${project}:\n${npm.stderr}`);
    process.exit(1);
  }
  if (after === before) {
    console.log(`[lock] ${path.join(project, "package-lock.json")}: as npm install writes it`);
    continue;
  }
  drifted++;
  writeFileSync(lock, before);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "once-lock-"));
  const rewritten = path.join(scratch, "package-lock.json");
  writeFileSync(rewritten, after);
  const diff = spawnSync("diff", ["-u", lock, rewritten], { encoding: "utf8" });
  rmSync(scratch, { recursive: true, force: true });
  console.error(
    `[lock] ${path.join(project, "package-lock.json")} differs from what npm install writes (run npm install there and commit it):\n${diff.stdout}`,
  );
}
process.exit(drifted ? 1 : 0);
