// A thin loop around a job's runOnce: run, and if it found work run again at once (a backlog
// drains at full speed), otherwise wait `idleMs`. stop() wakes the wait and resolves once the
// round in progress has finished, so a graceful shutdown never abandons a delivery half-way.
export interface Loop {
  stop(): Promise<void>;
  /** Resolves when the loop has stopped. */
  done: Promise<void>;
}

export function startLoop<T>(
  name: string,
  runOnce: () => Promise<T>,
  options: { idleMs: number; busy?: (result: T) => boolean; log?: (message: string) => void },
): Loop {
  let stopping = false;
  let wake: (() => void) | undefined;
  const idle = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, options.idleMs);
      timer.unref?.();
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  const done = (async () => {
    while (!stopping) {
      let busy = false;
      try {
        busy = options.busy ? options.busy(await runOnce()) : false;
      } catch (error) {
        options.log?.(`[${name}] ${(error as Error).message}`);
      }
      if (!busy && !stopping) await idle();
    }
  })();

  return {
    done,
    async stop() {
      stopping = true;
      wake?.();
      await done;
    },
  };
}
