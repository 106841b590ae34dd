// `npm start` runs the payment loops (outbox worker, provider events, reconciliation) in a process
// of their own beside Next.js: measured with `npm run bench:http` (against `-- --payments-in-process`), a checkout
// then no longer waits behind payment work on the server's one thread. The worker is restarted if
// it dies, and stopped (by its pid) with the server.
import { spawn, type ChildProcess, type StdioOptions } from "node:child_process";
import path from "node:path";
import { stopChild } from "./child";

const RESTART_DELAY_MS = 1_000;

export interface WorkerOptions {
  env?: NodeJS.ProcessEnv;
  stdio?: "inherit" | "ignore";
  /** Told each worker's pid as it starts (tests). */
  onStart?: (pid: number) => void;
}

/**
 * `scripts/worker.ts` as a child: `node --import tsx`, not the tsx CLI, so the pid we hold is the
 * worker's own (the CLI would run the script in a child of its own).
 */
export function spawnPaymentWorker(root: string, options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions } = {}): ChildProcess {
  const script = path.join(root, "scripts/worker.ts");
  return spawn(process.execPath, ["--import", "tsx", script], { cwd: root, stdio: options.stdio ?? "inherit", env: options.env ?? process.env });
}

export function supervisePaymentWorker(root: string, options: WorkerOptions = {}): { stop: () => Promise<void> } {
  let child: ChildProcess | undefined;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    child = spawnPaymentWorker(root, options);
    if (child.pid !== undefined) options.onStart?.(child.pid);
    child.on("exit", (code, signal) => {
      if (stopping) return;
      console.error(`[worker] exited (${signal ?? code}); starting it again in ${RESTART_DELAY_MS / 1000} s`);
      restartTimer = setTimeout(start, RESTART_DELAY_MS);
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
