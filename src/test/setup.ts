// Every test process: the logger is quiet (a test that wants a log line builds its own).
import { setLogLevel } from "../server/logger";

setLogLevel("silent");
