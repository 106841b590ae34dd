// `npm start` runs the payment loops (outbox worker, reconciliation) in a process
// of their own beside Next.js: measured with `npm run bench:http` (against `--
// --payments-in-process`), a checkout then no longer waits behind payment work on the server's one
// thread. The worker is restarted if it dies, after a wait that doubles while it keeps dying at
// once; one that dies at once MAX_QUICK_CRASHES times in a row has a reason a restart will not fix
// (a bad configuration, a broken install), so the supervisor gives up and says so instead of
// looping. It is stopped (by its pid) with the server.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import path from "node:path";
import { stopChild } from "../../tools/process";

/** The first restart waits a second; each quick crash after it doubles the wait, up to 30 s. */
export const RESTART_DELAY_MS = 1_000;
export const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that ran less than this died "at once": its next crash is likely the same one. */
export const QUICK_CRASH_MS = 10_000;
export const MAX_QUICK_CRASHES = 5;

export interface WorkerOptions {
  env?: NodeJS.ProcessEnv;
  stdio?: "inherit" | "ignore";
  /** Told each worker's pid as it starts (tests). */
  onStart?: (pid: number) => void;
  /** Called once when the supervisor stops restarting the worker, with the sentence it printed. */
  onGiveUp?: (reason: string) => void;
  /** For tests: the first restart's wait. */
  restartDelayMs?: number;
}

/**
 * `scripts/worker.ts` as a child: `node --import tsx`, not the tsx CLI, so the pid we hold is the
 * worker's own (the CLI would run the script in a child of its own).
 */
export function spawnPaymentWorker(
  root: string,
  options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions; script?: string } = {},
): ChildProcess {
  const script = path.join(root, options.script ?? "scripts/worker.ts");
  return spawn(process.execPath, ["--import", "tsx", script], {
    cwd: root,
    stdio: options.stdio ?? "inherit",
    env: options.env ?? process.env,
  });
}

export function supervisePaymentWorker(
  root: string,
  options: WorkerOptions = {},
): { stop: () => Promise<void> } {
  let child: ChildProcess | undefined;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  let quickCrashes = 0;
  const firstDelay = options.restartDelayMs ?? RESTART_DELAY_MS;
  const start = () => {
    const startedAt = Date.now();
    child = spawnPaymentWorker(root, options);
    if (child.pid !== undefined) options.onStart?.(child.pid);
    child.on("exit", (code, signal) => {
      if (stopping) return;
      quickCrashes = Date.now() - startedAt < QUICK_CRASH_MS ? quickCrashes + 1 : 0;
      if (quickCrashes >= MAX_QUICK_CRASHES) {
        const reason = `the payment worker exited (${signal ?? code}) ${quickCrashes} times in a row within ${QUICK_CRASH_MS / 1000} s of starting: not restarting it (its output above says why)`;
        console.error(`[worker] ${reason}`);
        options.onGiveUp?.(reason);
        return;
      }
      const delay = Math.min(firstDelay * 2 ** Math.max(0, quickCrashes - 1), MAX_RESTART_DELAY_MS);
      console.error(`[worker] exited (${signal ?? code}); starting it again in ${delay / 1000} s`);
      restartTimer = setTimeout(start, delay);
    });
  };
  start();
  return {
    async stop() {
      stopping = true;
      clearTimeout(restartTimer);
      if (child) await stopChild(child);
    },
  };
}
