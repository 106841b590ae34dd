// "PostgreSQL cannot be reached": refused, reset, shut down, starting up, timed out. Recognised
// from an error (its code or message, anywhere in the cause chain) or from a message already
// turned into text (background jobs log strings). Used by the job log and the command-line tools
// to say one sentence instead of a stack per attempt.

const CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EPIPE",
  "57P01",
  "57P02",
  "57P03",
  "P1001",
  "P1017",
]);
const MESSAGES =
  /Can't reach database server|ECONNREFUSED|Connection terminated|connection timeout|timeout exceeded when trying to connect|the database system is (shutting down|starting up|in recovery mode)|terminating connection due to administrator command|Server has closed the connection|Code: `57P0[123]`/i;

export function isConnectionFailure(error: unknown): boolean {
  if (typeof error === "string") return MESSAGES.test(error);
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === "string" && (CODES.has(code) || code.startsWith("08"))) return true;
    if (typeof message === "string" && MESSAGES.test(message)) return true;
    const errors = (e as { errors?: unknown }).errors; // AggregateError: IPv4 and IPv6 both refused
    if (Array.isArray(errors) && errors.some(isConnectionFailure)) return true;
  }
  return false;
}
