// `npm run reconcile -- <args>` as an operator runs it: a process of its own, in demo mode, on the
// test's database and provider; resolves with its output, rejects (with the output) on a non-zero
// exit.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";

const ROOT = path.resolve(import.meta.dirname, "../..");

export function reconcileCommand(
  target: { databaseUrl: string; providerUrl: string },
  ...args: string[]
) {
  return promisify(execFile)(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "scripts/reconcile.ts"), ...args],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: target.databaseUrl,
        DEMO_MODE: "1",
        PAYMENTS_PROVIDER_URL: target.providerUrl,
      },
    },
  );
}
