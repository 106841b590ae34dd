// `npm start` runs the payment loops (outbox worker, provider events, reconciliation) in a process
// of their own beside Next.js: measured with `npm run bench:http` (against `-- --payments-in-process`), a checkout
// then no longer waits behind payment work on the server's one thread. The worker is restarted if
// it dies, and stopped (by its pid) with the server.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import path from "node:path";

const RESTART_DELAY_MS = 1_000;

export interface WorkerOptions {
  env?: NodeJS.ProcessEnv;
  stdio?: "inherit" | "ignore";
  /** Told each worker's pid as it starts (tests). */
  onStart?: (pid: number) => void;
}

export function supervisePaymentWorker(root: string, options: WorkerOptions = {}): { stop: () => Promise<void> } {
  let child: ChildProcess | undefined;
  let stopping = false;
  let restartTimer: NodeJS.Timeout | undefined;
  const start = () => {
    const script = path.join(root, "scripts/worker.ts");
    child = spawn(process.execPath, ["--import", "tsx", script], { cwd: root, stdio: options.stdio ?? "inherit", env: options.env ?? process.env });
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
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit", { signal: AbortSignal.timeout(10_000) }).catch(() => child?.kill("SIGKILL"));
    },
  };
}
