// The folder under which everything one Vitest run puts in the temp folder goes: named by the
// run's main process, so the configuration (vitest.config.ts hands it to the test processes as
// their TMPDIR, which the processes they start inherit) and the global setup (which makes it and
// removes it with whatever was left in it) agree without passing it around.
import os from "node:os";
import path from "node:path";

export const runTempRoot = (pid = process.pid): string =>
  path.join(os.tmpdir(), `once-vitest-${pid}`);
