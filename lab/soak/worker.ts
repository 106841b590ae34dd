// The payment worker as its own process (`npm run worker`: outbox, reconciliation), as production
// runs it beside instances started with ONCE_PAYMENT_JOBS=0. It waits out a lost database by
// itself; the soak still restarts it if it ever exits, as a process supervisor (systemd's
// Restart=always) would, and writes each restart to the log (a restart is a finding to look at).
import path from "node:path";
import { startChild, stopChild, type Child } from "./processes";

/**
 * Between an exit and the restart: a worker that cannot reach the database during a failover would
 * otherwise spin.
 */
const RESTART_DELAY_MS = 1_000;

const ROOT = path.resolve(import.meta.dirname, "../..");

export interface SoakWorker {
  /** Stops it and starts it again with `env` added. */
  restartWith(env: Record<string, string>): Promise<void>;
  restarts(): number;
  stop(): Promise<void>;
}

export function startSoakWorker(o: {
  env: Record<string, string>;
  dir: string;
  log: (m: string) => void;
}): SoakWorker {
  let env = o.env;
  let child: Child | undefined;
  let stopping = false;
  let restarts = 0;
  const start = () => {
    const started = startChild(
      "worker",
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts/worker.ts")],
      {
        cwd: ROOT,
        env: { ...process.env, ...env, NODE_ENV: "production" },
        logFile: path.join(o.dir, "worker.log"),
      },
    );
    child = started;
    void started.exited.then(() => {
      if (stopping || child !== started) return;
      restarts++;
      o.log(
        `the payment worker exited (${started.proc.exitCode ?? started.proc.signalCode}); starting it again`,
      );
      setTimeout(() => {
        if (!stopping && child === started) start();
      }, RESTART_DELAY_MS);
    });
  };
  start();
  return {
    async restartWith(extra) {
      env = { ...env, ...extra };
      const old = child;
      child = undefined; // its exit is ours, not a crash
      if (old) await stopChild(old);
      start();
    },
    restarts: () => restarts,
    async stop() {
      stopping = true;
      if (child) await stopChild(child);
    },
  };
}
