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
const MINUTES_TRIM_MS = 60_000;
/** While a round ends behind (its time budget spent), the next starts after this breather. */
export const REAPER_BACKLOG_PAUSE_MS = 1_000;

export type JobLog = (job: string, error: Error) => void;

/**
 * Runs `job` `ms` after the start, then `ms` after each run ends (or after the delay the run
 * returns), so a job never overlaps with itself; returns the stop function.
 */
function loop(ms: number, name: string, job: () => Promise<number | void>, log: JobLog) {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const later = (delay: number) => {
    timer = setTimeout(() => void run(), delay);
    timer.unref();
  };
  const run = async () => {
    const next = await job().catch((error: unknown) => log(name, error as Error));
    if (!stopped) later(next ?? ms);
  };
  later(ms);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
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
  return loop(
    schedule.intervalMs,
    "reaper",
    async () => {
      const result = await reapExpiredKeys(run);
      const lag = await reaperLagSeconds(run);
      if (lag > schedule.lagWarnSeconds) {
        const what = `the oldest key past retention is ${Math.round(lag)} s old (warning above ${schedule.lagWarnSeconds} s)`;
        log("reaper", new Error(`behind: ${what}; this round deleted ${result.deleted} keys`));
      }
      return result.ran && !result.caughtUp ? REAPER_BACKLOG_PAUSE_MS : schedule.intervalMs;
    },
    log,
  );
}

export function startEngineJobs(
  run: SqlRunner,
  counters: Counters,
  schedule: ReaperSchedule & { counterFlushMs: number },
  log: JobLog,
): () => Promise<void> {
  const stops = [
    startReaper(run, schedule, log),
    loop(SWEEPER_INTERVAL_MS, "sweeper", async () => void (await sweepStuckKeys(run)), log),
    loop(MINUTES_TRIM_MS, "counter minutes", async () => void (await trimCounterMinutes(run)), log),
    loop(schedule.counterFlushMs, "counters", async () => void (await counters.flush(run)), log),
  ];
  return async () => {
    for (const stop of stops) stop();
    await counters.flush(run).catch(() => {});
  };
}
