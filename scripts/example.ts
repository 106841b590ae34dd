// `npm run example:test [-- minimal|t3|plain|servers|frameworks]`: the engine as an adopter gets it. Builds
// @once/idempotency, packs it with `npm pack`, installs that tarball into the example (never the
// workspace), and runs the example's checks on a real PostgreSQL:
// - examples/minimal (tRPC standalone, Prisma 7): its type check and tests (its own, and the
//   package's conformance kit);
// - examples/t3 (create-t3-app: Next.js App Router, superjson, Prisma 6): its type check, `next
//   build`, then its tests against `next start` (the kit through /api/trpc, Dates through a
//   replay, a double-click in Chromium);
// - examples/plain (Next.js App Router without tRPC, Prisma 7): `next build`, its type check, then
//   its tests against `next start` (a Route Handler behind @once/idempotency/http, every entry
//   point but the tRPC and client ones loading without @trpc/server);
// - examples/servers (Hono on @hono/node-server, and node:http through toNodeHandler, Prisma 7):
//   its type check, then the package's draft conformance kit against both servers;
// - examples/frameworks (Express 5, Fastify 5, NestJS 12: the package's native adapters, Prisma 7):
//   its type check, then each app's checks and the draft's vectors through each adapter.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { PACKED_ENGINE, packEngine } from "./pack-engine";

const root = path.resolve(import.meta.dirname, "..");

const EXAMPLES: Record<string, string[][]> = {
  minimal: [["npx", "tsc", "--noEmit"]],
  // next build writes next-env.d.ts (the CSS module types) before tsc reads it. The env schema
  // (examples/t3/src/env.js) wants a DATABASE_URL at build time; the tests start the server with a
  // real one.
  t3: [
    ["npx", "next", "build"],
    ["npx", "tsc", "--noEmit"],
  ],
  plain: [
    ["npx", "next", "build"],
    ["npx", "tsc", "--noEmit"],
  ],
  servers: [["npx", "tsc", "--noEmit"]],
  frameworks: [["npx", "tsc", "--noEmit"]],
};

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}): void {
  console.log(`[example] ${path.relative(root, cwd) || "."}$ ${cmd} ${args.join(" ")}`);
  execFileSync(cmd, args, {
    cwd,
    stdio: "inherit",
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", CHECKPOINT_DISABLE: "1", ...env },
  });
}

// `npm test` asks for each example's test counts in a JSON report, `--vitest-json=<file>`
// (scripts/lib/test-counts.ts).
const { values, positionals: names } = parseArgs({
  options: { "vitest-json": { type: "string" } },
  allowPositionals: true,
});
const report = values["vitest-json"];
for (const name of names)
  if (!EXAMPLES[name])
    throw new Error(`No example "${name}": one of ${Object.keys(EXAMPLES).join(", ")}`);

packEngine();
for (const name of names.length ? names : Object.keys(EXAMPLES)) {
  const example = path.join(root, "examples", name);
  if (!existsSync(path.join(example, "node_modules")) || process.env.CI)
    run("npm", ["ci", "--no-audit", "--no-fund"], example);
  run("npm", ["install", "--no-save", "--no-audit", "--no-fund", PACKED_ENGINE], example);
  for (const [cmd, ...args] of EXAMPLES[name]!)
    run(cmd!, args, example, { SKIP_ENV_VALIDATION: "1" });
  run(
    "npx",
    [
      "vitest",
      "run",
      ...(report ? ["--reporter=default", "--reporter=json", `--outputFile.json=${report}`] : []),
    ],
    example,
  );
}
