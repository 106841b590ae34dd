// @once/idempotency/jobs: the background work, for a separate worker or your own scheduler
// (engine.startJobs runs them all on timers).
export {
  reapExpiredKeys,
  reaperLagSeconds,
  REAPER_BATCH_SIZE,
  type ReaperResult,
  type ReaperOptions,
} from "../jobs/reaper.js";
export {
  sweepStuckKeys,
  SWEEPER_GRACE_SECONDS,
  type SweeperResult,
  type SweptKey,
} from "../jobs/sweeper.js";
export { startEngineJobs, SWEEPER_INTERVAL_MS, type JobLog } from "../jobs/scheduler.js";
export { Counters, trimCounterMinutes, type CounterDelta } from "../counters.js";
export { CounterEvent } from "../constants.js";
