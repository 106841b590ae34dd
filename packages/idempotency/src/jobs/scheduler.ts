// Thin loops around the jobs' run-once functions, for a server process. Each job guards itself
// with an advisory lock, so every instance may schedule them.
import { trimCounterMinutes, type Counters } from "../counters.js";
import type { SqlRunner } from "../store/postgres.js";
import { reapExpiredKeys, reaperLagSeconds } from "./reaper.js";
import { sweepStuckKeys } from "./sweeper.js";

/**
 * The sweeper every minute: its keys are five minutes stale already. The reaper's interval and
 * the counters' are configuration (reaperIntervalMs, counterFlushMs).
 */
export const SWEEPER_INTERVAL_MS = 60_000;
export const COUNTER_MINUTES_INTERVAL_MS = 60_000;
/** While a round ends behind (its time budget spent), the next starts after this breather. */
export const REAPER_BACKLOG_PAUSE_MS = 1_000;

export type JobLog = (job: string, error: Error) => void;

/** Runs `job` every `ms`, never overlapping with itself; returns the stop function. */
export function every(
  ms: number,
  name: string,
  job: () => Promise<unknown>,
  log: JobLog,
): () => void {
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

export interface ReaperSchedule {
  intervalMs: number;
  /** Above this lag (seconds) after a round, the round's log line warns the operator. */
  lagWarnSeconds: number;
}

/**
 * The reaper's loop: a round every `intervalMs`, or after a short breather while a round ends
 * behind, so it keeps up with any rate the store accepts; after each round its lag is checked.
 */
export function startReaper(run: SqlRunner, schedule: ReaperSchedule, log: JobLog): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const round = async () => {
    let next = schedule.intervalMs;
    try {
      const result = await reapExpiredKeys(run);
      if (result.ran && !result.caughtUp) next = REAPER_BACKLOG_PAUSE_MS;
      const lag = await reaperLagSeconds(run);
      if (lag > schedule.lagWarnSeconds) {
        const what = `the oldest key past retention is ${Math.round(lag)} s old (warning above ${schedule.lagWarnSeconds} s)`;
        log("reaper", new Error(`behind: ${what}; this round deleted ${result.deleted} keys`));
      }
    } catch (error) {
      log("reaper", error as Error);
    }
    if (stopped) return;
    timer = setTimeout(() => void round(), next);
    timer.unref();
  };
  timer = setTimeout(() => void round(), schedule.intervalMs);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

export function startEngineJobs(
  run: SqlRunner,
  counters: Counters,
  schedule: ReaperSchedule & { counterFlushMs: number },
  log: JobLog,
): () => Promise<void> {
  const stops = [
    startReaper(run, schedule, log),
    every(SWEEPER_INTERVAL_MS, "sweeper", () => sweepStuckKeys(run), log),
    every(COUNTER_MINUTES_INTERVAL_MS, "counter minutes", () => trimCounterMinutes(run), log),
    every(schedule.counterFlushMs, "counters", () => counters.flush(run), log),
  ];
  return async () => {
    for (const stop of stops) stop();
    await counters.flush(run).catch(() => {});
  };
}
