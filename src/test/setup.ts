// Every test process: the logger is quiet (a test that wants a log line builds its own), and
// session cookies are signed with the tests' secret (a server gets its own from its configuration).
import { setSessionSecret } from "../server/auth/session";
import { setLogLevel } from "../server/logger";

export const TEST_SESSION_SECRET = "test-session-secret-0123456789";

setLogLevel("silent");
setSessionSecret(TEST_SESSION_SECRET);
