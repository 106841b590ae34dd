// `npm run example:test`: the engine as an adopter gets it. Builds @once/idempotency, packs it
// with `npm pack`, installs that tarball into examples/minimal (never the workspace), and runs the
// example's type check and tests (its own, and the package's conformance kit) on a real PostgreSQL.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const engine = path.join(root, "packages", "idempotency");
const packDir = path.join(engine, "pack");
const example = path.join(root, "examples", "minimal");

function run(cmd: string, args: string[], cwd: string): void {
  console.log(`[example] ${path.relative(root, cwd) || "."}$ ${cmd} ${args.join(" ")}`);
  execFileSync(cmd, args, { cwd, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1" } });
}

run("npm", ["run", "build", "--silent"], engine);
rmSync(packDir, { recursive: true, force: true });
mkdirSync(packDir);
run("npm", ["pack", "--silent", "--pack-destination", packDir], engine);
const tarball = readdirSync(packDir).find((f) => f.endsWith(".tgz"));
if (!tarball) throw new Error("npm pack made no tarball");
copyFileSync(path.join(packDir, tarball), path.join(packDir, "once-idempotency.tgz"));

if (!existsSync(path.join(example, "node_modules")) || process.env.CI) run("npm", ["ci", "--no-audit", "--no-fund"], example);
run("npm", ["run", "install:engine", "--silent"], example);
run("npx", ["tsc", "--noEmit"], example);
// `npm test` asks for the example's test counts in a JSON report (scripts/lib/test-counts.ts).
const report = process.env.ONCE_EXAMPLE_VITEST_JSON;
run("npx", ["vitest", "run", ...(report ? ["--reporter=default", "--reporter=json", `--outputFile.json=${report}`] : [])], example);
