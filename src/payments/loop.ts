// A thin loop around a job's runOnce: run, and if it found work run again at once (a backlog
// drains at full speed), otherwise wait `idleMs`; after a failed round wait longer each time (the
// database is probably gone: no need to knock every second), up to MAX_FAILURE_BACKOFF_MS.
// stop() wakes the wait and resolves once the round in progress has finished, so a graceful
// shutdown never abandons a delivery half-way. The wait's timer keeps the process alive: a worker
// whose connections all dropped must wait for its database, not exit because nothing else is left.

/** A database that is back is noticed within 10 s, and a long outage costs one query per 10 s. */
export const MAX_FAILURE_BACKOFF_MS = 10_000;
export interface Loop {
  stop(): Promise<void>;
  /** Resolves when the loop has stopped. */
  done: Promise<void>;
}

export function startLoop<T>(
  name: string,
  runOnce: () => Promise<T>,
  options: {
    idleMs: number;
    busy?: (result: T) => boolean;
    onError?: (job: string, error: unknown) => void;
  },
): Loop {
  let stopping = false;
  const sleep = wakeableSleep();
  const done = (async () => {
    let failures = 0;
    while (!stopping) {
      let busy = false;
      try {
        // Always run the job: `busy` only says whether to run again at once.
        const result = await runOnce();
        busy = options.busy?.(result) ?? false;
        failures = 0;
      } catch (error) {
        failures++;
        options.onError?.(name, error);
      }
      if (!busy && !stopping) await sleep.wait(waitAfter(failures, options.idleMs));
    }
  })();

  return {
    done,
    async stop() {
      stopping = true;
      sleep.wake();
      await done;
    },
  };
}

/**
 * `idleMs` after a good round; after failures, doubling from `idleMs` up to
 * MAX_FAILURE_BACKOFF_MS (or `idleMs`, if that is longer).
 */
function waitAfter(failures: number, idleMs: number): number {
  if (failures === 0) return idleMs;
  return Math.min(idleMs * 2 ** (failures - 1), Math.max(idleMs, MAX_FAILURE_BACKOFF_MS));
}

/** A wait that wake() ends at once, so stop() need not sit out an idle period. */
function wakeableSleep() {
  let wake: (() => void) | undefined;
  return {
    wait: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    wake: () => wake?.(),
  };
}
