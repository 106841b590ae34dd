// What a server process does when Next.js starts it (src/instrumentation.ts): build the
// composition root, so a bad configuration stops the process with one sentence before its first
// request, and start the background jobs (unless ONCE_BACKGROUND_JOBS=0, an instance that only
// serves requests).
import { serverApp, type ServerApp } from "./app";

export function startServerProcess(): void {
  let app: ServerApp;
  try {
    app = serverApp();
  } catch (error) {
    console.error(`[once] cannot start: ${(error as Error).message}`);
    process.exit(1);
  }
  const stopJobs = app.config.jobs.background
    ? app.startJobs({ payments: app.config.jobs.payments })
    : async () => {};
  // On SIGTERM/SIGINT the jobs stop and the counters are flushed before the process ends. With
  // NEXT_MANUAL_SIG_HANDLE (npm start sets it) Next.js leaves the signal to us and we exit when
  // done; without it Next.js exits on its own, and our flush, started first, races its exit.
  let stopping: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals) => {
    stopping ??= stopJobs()
      .then(() => app.close())
      .catch((error: unknown) => console.error(`[once] stopping: ${(error as Error).message}`))
      .finally(() => {
        if (app.config.manualSignals) process.exit(signal === "SIGINT" ? 130 : 143);
      });
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.prependListener(signal, () => stop(signal));
}
