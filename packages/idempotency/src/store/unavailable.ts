// Why the store could not serve a statement, if that is what an error says: **busy** (it is up,
// but no connection came free in time: the pool's wait ran out) or **unavailable** (refused,
// terminated, shut down, starting up), rather than a statement the database refused. Both answer
// 503 and are retried with the same key, but they tell the operator and the client different
// things: busy is load (add capacity, or wait a moment), unavailable is an outage. Everything
// else is a bug or a decision and is passed on. Errors arrive in several wrappings: pg's own,
// Prisma's (P1001 …, or a driver-adapter error with a `kind`), each with a `cause` chain.

export const StoreFailure = {
  /** Up, but no connection came free in time. */
  BUSY: "busy",
  /** Cannot be reached, or went away. */
  UNAVAILABLE: "unavailable",
} as const;
export type StoreFailure = (typeof StoreFailure)[keyof typeof StoreFailure];

/** Node socket errors that mean the server is not there. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL SQLSTATEs of a server going away: class 08 (connection exception), shutdowns, too many
 * connections.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || ["57P01", "57P02", "57P03", "53300"].includes(code);
}

/** Prisma's codes for a database it cannot reach or whose connection it lost. */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017"]);

/** Prisma's "Timed out fetching a new connection from the connection pool". */
const PRISMA_BUSY = "P2024";

/** Driver-adapter error kinds (@prisma/driver-adapter-utils) that mean the server is gone. */
const ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TooManyConnections",
  "TransactionAlreadyClosed",
]);

/**
 * pg-pool's words when every connection stayed checked out for connectionTimeoutMillis (a new
 * connection that does not come up in time is "Connection terminated due to connection
 * timeout": unavailable).
 */
const BUSY_MESSAGES =
  /timeout exceeded when trying to connect|Timed out fetching a new connection from the connection pool/i;

/** pg and the pool say these in words only. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|Connection ended unexpectedly|Client has encountered a connection error|server closed the connection|Cannot use a pool after calling end|the database system is (starting up|shutting down)|terminating connection due to administrator command/i;

/**
 * The `code` of an error a bounded pool throws when it refuses a request at once, because its
 * queue already holds more than it can drain within the wait: busy. Such an error may carry
 * `retryAfterSeconds`, the pool's own estimate of when it will have room (see retryAfterOf).
 */
export const POOL_QUEUE_FULL = "POOL_QUEUE_FULL";

/** What this one error object (not its causes) says. */
function classifyOne(error: Record<string, unknown>): StoreFailure | null {
  const code = typeof error.code === "string" ? error.code : undefined;
  const message = typeof error.message === "string" ? error.message : "";
  if (code === PRISMA_BUSY || code === POOL_QUEUE_FULL || BUSY_MESSAGES.test(message))
    return StoreFailure.BUSY;
  if (
    code &&
    (SOCKET_CODES.has(code) ||
      PRISMA_UNAVAILABLE.has(code) ||
      (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)))
  ) {
    return StoreFailure.UNAVAILABLE;
  }
  const originalCode = error.originalCode;
  if (typeof originalCode === "string" && isUnavailableSqlState(originalCode))
    return StoreFailure.UNAVAILABLE;
  if (typeof error.kind === "string" && ADAPTER_KINDS.has(error.kind))
    return StoreFailure.UNAVAILABLE;
  return UNAVAILABLE_MESSAGES.test(message) ? StoreFailure.UNAVAILABLE : null;
}

/**
 * Busy, unavailable, or null (not the store's failure), looking through the error, its `cause`
 * chain, an AggregateError's errors and Prisma's driver-adapter error. The one classifier: the
 * engine, the app's edge and its jobs all ask it.
 */
export function classifyStoreFailure(error: unknown, depth = 0): StoreFailure | null {
  if (depth > 8 || error === null || typeof error !== "object") return null;
  const e = error as Record<string, unknown>;
  const own = classifyOne(e);
  if (own) return own;
  const meta = e.meta as Record<string, unknown> | undefined;
  const inner = [...(e.errors instanceof Array ? e.errors : []), e.cause, meta?.driverAdapterError]; // AggregateError: IPv4 and IPv6 both refused
  for (const candidate of inner) {
    const found = classifyStoreFailure(candidate, depth + 1);
    if (found) return found;
  }
  return null;
}

/**
 * Whether the store could not serve (busy or unavailable): a 503 and a retry, not the caller's
 * fault.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return classifyStoreFailure(error) !== null;
}

/**
 * The wait an error suggests before a retry (`retryAfterSeconds`, a positive whole number, on the
 * error or in its `cause` chain), if any: a bounded pool derives it from its drain rate.
 */
export function retryAfterOf(error: unknown, depth = 0): number | undefined {
  if (depth > 8 || error === null || typeof error !== "object") return undefined;
  const e = error as Record<string, unknown>;
  const own = e.retryAfterSeconds;
  if (typeof own === "number" && Number.isInteger(own) && own > 0) return own;
  const meta = e.meta as Record<string, unknown> | undefined;
  for (const candidate of [e.cause, meta?.driverAdapterError]) {
    const found = retryAfterOf(candidate, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
