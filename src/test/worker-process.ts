// `npm run worker` as the tests run it: a process of its own (scripts/worker.ts, spawned as the
// supervisor spawns it) with the variables the test gives it, its output kept, and waited for
// until it says it runs.
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { spawnPaymentWorker } from "../../scripts/lib/payment-worker";
import { stopChild, waitFor } from "../../tools/process";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

export interface WorkerProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
}

/** Starts the worker with exactly `env`; resolves once it says it runs (stopped if it does not). */
export async function startWorker(
  env: Record<string, string | undefined>,
  timeoutMs: number,
  /** Another entry than `npm run worker`'s (a test's worker, src/test/*-worker.ts). */
  script?: string,
) {
  // (Next.js's types make NODE_ENV required in a ProcessEnv; a bare environment has none.)
  const child = spawnPaymentWorker(ROOT, {
    script,
    env: env as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  for (const stream of [child.stdout!, child.stderr!])
    stream.on("data", (d: Buffer) => (output += d));
  try {
    await waitFor("the worker to run", () => output.includes("[worker] running"), timeoutMs, child);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { child, output: () => output } satisfies WorkerProcess;
}
