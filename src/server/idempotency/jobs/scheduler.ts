// Thin loops around the jobs' run-once functions, for the server process. Each job guards itself
// with an advisory lock, so every instance may schedule them.
import type pg from "pg";
import type { PrismaClient } from "../../../generated/prisma/client";
import type { Counters } from "../counters";
import { reapExpiredKeys } from "./reaper";
import { sweepStuckKeys } from "./sweeper";

/**
 * Every minute: keys expire after hours, so a minute's delay in reclaiming them costs nothing, and
 * a round that finds nothing is one indexed query. Counters flush every 5 s so the dashboard is
 * near-live.
 */
export const REAPER_INTERVAL_MS = 60_000;
export const SWEEPER_INTERVAL_MS = 60_000;
export const COUNTER_FLUSH_INTERVAL_MS = 5_000;

export function every(ms: number, name: string, run: () => Promise<unknown>, log: (msg: string) => void): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return; // never overlap with ourselves
    running = true;
    run()
      .catch((error: unknown) => log(`[${name}] ${(error as Error).message}`))
      .finally(() => {
        running = false;
      });
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export function startEngineJobs(
  db: PrismaClient,
  counters: Counters,
  log: (msg: string) => void = console.warn,
  pool?: pg.Pool,
): () => Promise<void> {
  const stops = [
    every(REAPER_INTERVAL_MS, "reaper", () => reapExpiredKeys(db, { pool }), log),
    every(SWEEPER_INTERVAL_MS, "sweeper", () => sweepStuckKeys(db), log),
    every(COUNTER_FLUSH_INTERVAL_MS, "counters", () => counters.flush(db), log),
  ];
  return async () => {
    for (const stop of stops) stop();
    await counters.flush(db).catch(() => {});
  };
}
