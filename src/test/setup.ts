// Every test process: the logger is quiet (a test that wants a log line builds its own), and the
// temp folder is the run's own (src/test/global-setup.ts removes it, with whatever the tests and
// the processes they start left in it).
import { inject } from "vitest";
import { setLogLevel } from "../server/logger";

setLogLevel("silent");
process.env.TMPDIR = inject("tempRoot");
