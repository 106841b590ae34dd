// Is this error the store being gone (refused, terminated, shut down, pool timed out), rather
// than a statement the database refused? The first answers 503 and is retried with the same key;
// the second is a bug or a decision and is passed on. Errors arrive in several wrappings: pg's
// own, Prisma's (P1001 …, or a driver-adapter error with a `kind`), each with a `cause` chain.

/** Node socket errors that mean the server is not there. */
const SOCKET_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTFOUND", "EAI_AGAIN"]);

/** PostgreSQL SQLSTATEs of a server going away: class 08 (connection exception), shutdowns, too many connections. */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code);
}

/** Prisma's codes for a database it cannot reach or whose connection it lost. */
const PRISMA_CODES = new Set(["P1001", "P1002", "P1008", "P1017", "P2024"]);

/** Driver-adapter error kinds (@prisma/driver-adapter-utils) that mean the same. */
const ADAPTER_KINDS = new Set(["DatabaseNotReachable", "ConnectionClosed", "SocketTimeout", "TooManyConnections", "TransactionAlreadyClosed"]);

/** pg and the pool say these in words only. */
const MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Connection ended unexpectedly|Client has encountered a connection error|server closed the connection|Cannot use a pool after calling end|the database system is (starting up|shutting down)|terminating connection due to administrator command/i;

function looksUnavailable(error: Record<string, unknown>): boolean {
  const code = typeof error.code === "string" ? error.code : undefined;
  if (code && (SOCKET_CODES.has(code) || PRISMA_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)))) return true;
  const originalCode = error.originalCode;
  if (typeof originalCode === "string" && isUnavailableSqlState(originalCode)) return true;
  if (typeof error.kind === "string" && ADAPTER_KINDS.has(error.kind)) return true;
  return typeof error.message === "string" && MESSAGES.test(error.message);
}

export function isStoreUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 8 || error === null || typeof error !== "object") return false;
  const e = error as Record<string, unknown>;
  if (looksUnavailable(e)) return true;
  if (e.errors instanceof Array && e.errors.some((inner) => isStoreUnavailable(inner, depth + 1))) return true; // AggregateError
  const meta = e.meta as Record<string, unknown> | undefined;
  return isStoreUnavailable(e.cause, depth + 1) || isStoreUnavailable(meta?.driverAdapterError, depth + 1);
}
