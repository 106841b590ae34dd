// The background jobs' warnings, as state changes rather than a stream (while PostgreSQL is down
// every loop fails every round, and Prisma's multi-line errors buried the server's output):
//   - every message is one line, and the same one at most once per REPEAT_MS;
//   - the store busy (every pool connection in use) is said as load;
//   - the store gone (the engine's classifier, as for a 503) is said once; the jobs' further
//     failures are silent until the health probe (health.ts) finds it answering again.
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import type { HealthMonitor } from "./health";

/** A job failing the same way every round says so once a minute, not once a second. */
const REPEAT_MS = 60_000;

export interface JobLog {
  /** A job's line (a delivery that failed, say): one line, not repeated within REPEAT_MS. */
  log: (message: string) => void;
  /** A job's round failed with `error`. */
  failed: (job: string, error: unknown) => void;
  stop: () => void;
}

/** What the jobs say about the database: one line per state. */
const Line = {
  busy: (job: string) =>
    `[${job}] the database is busy (no pool connection came free in time): the job retries`,
  down: (first: string) =>
    `[jobs] the database cannot be reached: background jobs retry quietly until it is back (${first})`,
  back: "[jobs] the database is reachable again: background jobs resume",
};

export function oneLine(message: string): string {
  return message.replace(/\s+/g, " ").trim();
}

export function createJobLog(
  health: HealthMonitor,
  write: (line: string) => void,
  options: { repeatMs?: number } = {},
): JobLog {
  const { repeatMs = REPEAT_MS } = options;
  const lastWritten = new Map<string, number>();
  /** Set while the database is gone: the jobs' failures are silent until it answers again. */
  let down = false;
  let stopped = false;

  const log = (message: string) => {
    const line = oneLine(message);
    const now = Date.now();
    if (down || now - (lastWritten.get(line) ?? -Infinity) < repeatMs) return;
    lastWritten.set(line, now);
    write(line);
  };
  const goDown = (first: string) => {
    down = true;
    write(Line.down(first));
    void health.answersAgain().then(() => {
      if (stopped) return;
      down = false;
      lastWritten.clear();
      write(Line.back);
    });
  };

  return {
    log,
    failed(job, error) {
      if (down) return;
      const line = `[${job}] ${oneLine(error instanceof Error ? error.message : String(error))}`;
      const failure = classifyStoreFailure(error);
      // Busy is load, not an outage: said as such (once per REPEAT_MS), and no probe.
      if (failure === StoreFailure.BUSY) return log(Line.busy(job));
      if (failure) return goDown(line);
      log(line);
    },
    stop: () => void (stopped = true),
  };
}
