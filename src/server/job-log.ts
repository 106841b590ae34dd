// The background jobs' warnings, as state changes rather than a stream (while PostgreSQL is down
// every loop fails every round, and Prisma's multi-line errors buried the server's output):
//   - every message is one line, and the same one at most once per REPEAT_MS;
//   - the store busy (every pool connection in use) is said as load;
//   - the store gone (the engine's classifier, as for a 503) is said once; the jobs' further
//     failures are silent until a probe (SELECT 1 every PROBE_MS) says it is back.
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import type { Db } from "./db/client";
import { poolOf } from "./db/client";

/** The outage demo restarts PostgreSQL in seconds: notice its return about as fast. */
const PROBE_MS = 2_000;
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
  db: Db,
  write: (line: string) => void,
  options: { probeMs?: number; repeatMs?: number } = {},
): JobLog {
  const { probeMs = PROBE_MS, repeatMs = REPEAT_MS } = options;
  const repeats = writeOnceEvery(repeatMs, write);
  /** Set while the database is gone: the jobs' failures are silent until the probe succeeds. */
  let probe: Probe | undefined;

  const log = (message: string) => {
    if (probe) return; // down: said once already
    repeats.write(oneLine(message));
  };
  const goDown = (first: string) => {
    write(Line.down(first));
    probe = probeUntilReachable(db, probeMs, () => {
      probe = undefined;
      repeats.forget();
      write(Line.back);
    });
  };

  return {
    log,
    failed(job, error) {
      if (probe) return;
      const line = `[${job}] ${oneLine(error instanceof Error ? error.message : String(error))}`;
      const failure = classifyStoreFailure(error);
      // Busy is load, not an outage: said as such (once per REPEAT_MS), and no probe.
      if (failure === StoreFailure.BUSY) return log(Line.busy(job));
      if (failure) return goDown(line);
      log(line);
    },
    stop() {
      probe?.stop();
      probe = undefined;
    },
  };
}

/** Writes a line unless the same line was written within `repeatMs`. */
function writeOnceEvery(repeatMs: number, write: (line: string) => void) {
  const lastWritten = new Map<string, number>();
  return {
    write(line: string): void {
      const now = Date.now();
      if (now - (lastWritten.get(line) ?? -Infinity) < repeatMs) return;
      lastWritten.set(line, now);
      write(line);
    },
    forget: () => lastWritten.clear(),
  };
}

type Probe = { stop(): void };

/**
 * Asks the database (SELECT 1) every `probeMs`, one question at a time, until it answers; then
 * stops and calls `back`. The timer does not keep the process alive.
 */
function probeUntilReachable(db: Db, probeMs: number, back: () => void): Probe {
  let probing = false;
  let stopped = false;
  const timer = setInterval(() => {
    if (probing) return;
    probing = true;
    void reachable(db)
      .then((ok) => {
        if (!ok || stopped) return;
        stop();
        back();
      })
      .finally(() => (probing = false));
  }, probeMs);
  timer.unref?.();
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  return { stop };
}

async function reachable(db: Db): Promise<boolean> {
  const pool = poolOf(db);
  try {
    await (pool ? pool.query("SELECT 1") : db.$queryRaw`SELECT 1`);
    return true;
  } catch {
    return false;
  }
}
