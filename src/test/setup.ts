// Every test process: the logger is quiet (a test that wants a log line builds its own). Its temp
// folder is the run's own (TMPDIR from vitest.config.ts; src/test/global-setup.ts removes it).
import { setLogLevel } from "../server/logger";

setLogLevel("silent");
