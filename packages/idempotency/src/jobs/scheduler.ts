// Thin loops around the jobs' run-once functions, for a server process. Each job guards itself
// with an advisory lock, so every instance may schedule them.
import { trimCounterMinutes, type Counters } from "../counters.js";
import type { SqlRunner } from "../store/postgres.js";
import { reapExpiredKeys } from "./reaper.js";
import { sweepStuckKeys } from "./sweeper.js";

/**
 * Every minute: keys expire after hours, so a minute's delay in reclaiming them costs nothing, and
 * a round that finds nothing is one indexed query. (The counters' interval is configuration:
 * counterFlushMs.)
 */
export const REAPER_INTERVAL_MS = 60_000;
export const SWEEPER_INTERVAL_MS = 60_000;

export type JobLog = (job: string, error: Error) => void;

/** Runs `job` every `ms`, never overlapping with itself; returns the stop function. */
export function every(ms: number, name: string, job: () => Promise<unknown>, log: JobLog): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    job()
      .catch((error: unknown) => log(name, error as Error))
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export function startEngineJobs(run: SqlRunner, counters: Counters, log: JobLog, options: { counterFlushMs: number }): () => Promise<void> {
  const stops = [
    every(REAPER_INTERVAL_MS, "reaper", () => reapExpiredKeys(run), log),
    every(SWEEPER_INTERVAL_MS, "sweeper", () => sweepStuckKeys(run), log),
    every(REAPER_INTERVAL_MS, "counter minutes", () => trimCounterMinutes(run), log),
    every(options.counterFlushMs, "counters", () => counters.flush(run), log),
  ];
  return async () => {
    for (const stop of stops) stop();
    await counters.flush(run).catch(() => {});
  };
}
