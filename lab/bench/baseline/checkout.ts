// What `npm run bench -- --baseline DIR` needs from another checkout of this repository, checked
// before anything starts: every missing piece is one sentence saying what to run in DIR.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

export class CheckoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "CheckoutError";
  }
}

/** A checkout whose app engine can be loaded by the bench's worker (worker.ts). */
export interface Checkout {
  /** The checkout's root, absolute and without symbolic links. */
  dir: string;
  /** The commit it is at (short), and whether it has changes not committed. */
  commit: string;
  dirty: boolean;
  /** The file `@once/idempotency` resolves to there, as its app resolves it. */
  engineEntry: string;
  /** Its tsconfig.json: tsx reads its path aliases when loading its modules. */
  tsconfig: string;
}

/** The files an app engine is made of, at every version the bench can compare. */
const APP_FILES = [
  "src/server/db/client.ts",
  "src/server/engine.ts",
  "tools/db/setup.ts",
  "tsconfig.json",
];

export function inspectCheckout(input: string): Checkout {
  const given = resolve(input);
  if (!existsSync(given) || !statSync(given).isDirectory())
    throw new CheckoutError(`--baseline ${input}: no such directory`);
  const dir = realpathSync(given);
  const top = git(dir, ["rev-parse", "--show-toplevel"]);
  if (top === null || realpathSync(top) !== dir)
    throw new CheckoutError(
      `--baseline ${input}: not the root of a git checkout (make one with: git clone <this repository> DIR && git -C DIR checkout <commit>)`,
    );
  const name = readJson(join(dir, "package.json"))?.name;
  if (name !== "once")
    throw new CheckoutError(`--baseline ${input}: not a checkout of once (package.json: ${name})`);
  for (const file of APP_FILES)
    if (!existsSync(join(dir, file)))
      throw new CheckoutError(
        `--baseline ${input}: ${file} is missing: this version has no app engine the bench can load`,
      );
  for (const pkg of ["pg", "@prisma/adapter-pg", "@prisma/client", "tsx"])
    if (!existsSync(join(dir, "node_modules", pkg, "package.json")))
      throw new CheckoutError(
        `--baseline ${input}: node_modules/${pkg} is missing: run \`npm ci\` in ${dir}`,
      );
  if (!existsSync(join(dir, "src/generated/prisma/client.ts")))
    throw new CheckoutError(
      `--baseline ${input}: the Prisma client is not generated: run \`npm run db:generate\` in ${dir}`,
    );
  const commit = git(dir, ["rev-parse", "--short", "HEAD"]) ?? "unknown";
  const dirty = (git(dir, ["status", "--porcelain", "--untracked-files=no"]) ?? "") !== "";
  const tsconfig = join(dir, "tsconfig.json");
  return { dir, commit, dirty, engineEntry: engineEntryOf(dir, input, tsconfig), tsconfig };
}

/**
 * Where `@once/idempotency` leads in that checkout, as tsx resolves it for its app: a path alias
 * in its tsconfig.json (the package's source, as today), else the workspace package's exports
 * (its built `dist`, as in older versions, which `npm run build:engine` makes).
 */
function engineEntryOf(dir: string, input: string, tsconfig: string): string {
  const paths = readTsconfigPaths(tsconfig);
  const alias = paths?.["@once/idempotency"]?.[0];
  if (alias) {
    const file = join(dir, alias);
    if (!existsSync(file))
      throw new CheckoutError(
        `--baseline ${input}: tsconfig.json maps @once/idempotency to ${alias}, which is missing`,
      );
    return file;
  }
  const pkgDir = join(dir, "node_modules/@once/idempotency");
  const pkg = readJson(join(pkgDir, "package.json"));
  if (!pkg)
    throw new CheckoutError(
      `--baseline ${input}: node_modules/@once/idempotency is missing: run \`npm ci\` in ${dir}`,
    );
  const exported = (pkg.exports as Record<string, { import?: string }> | undefined)?.["."];
  const target = exported?.import ?? (pkg.main as string | undefined);
  if (!target)
    throw new CheckoutError(`--baseline ${input}: @once/idempotency exports no entry for "import"`);
  const file = join(pkgDir, target);
  if (!existsSync(file))
    throw new CheckoutError(
      `--baseline ${input}: ${join("packages/idempotency", target)} is missing: this version loads the engine's build; run \`npm run build:engine\` in ${dir}`,
    );
  return realpathSync(file);
}

/** tsconfig.json may hold comments and trailing commas: read as TypeScript reads it. */
function readTsconfigPaths(file: string): Record<string, string[]> | undefined {
  const { config, error } = ts.parseConfigFileTextToJson(file, readFileSync(file, "utf8"));
  if (error) throw new CheckoutError(`${file}: cannot be read (${String(error.messageText)})`);
  return (config as { compilerOptions?: { paths?: Record<string, string[]> } }).compilerOptions
    ?.paths;
}

function readJson(file: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function git(dir: string, args: string[]): string | null {
  try {
    return execFileSync("git", ["-C", dir, ...args], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}
