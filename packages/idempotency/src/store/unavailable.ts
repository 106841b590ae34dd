// Why the store could not serve a statement, if that is what an error says: **busy** (PostgreSQL
// is up, but this client got no connection in time) or **unavailable** (it cannot be reached, or
// it refuses), rather than a statement the database refused. Both answer 503 and are retried with
// the same key, but they tell the operator and the client different things: busy is load (add
// capacity, or wait a moment), unavailable is an outage. Everything else is a bug or a decision
// and is passed on. Errors arrive in several wrappings: pg's own, Prisma's (P1001 …, or a
// driver-adapter error with a `kind`), each with a `cause` chain. The engine, the app's edge, its
// jobs and its health check all ask this one function.
//
// A wait that runs out is busy, whichever wait: the pool's queue, or a new connection's login. On a
// starved machine a login takes seconds while PostgreSQL serves every other connection (measured:
// the ten new connections of a cold 1 000-request burst answered `store_unavailable` while it was
// up). A silent host looks the same until the kernel gives up (ETIMEDOUT: unavailable); health,
// probing on its own, says "down" when nothing answers at all.

export const StoreFailure = {
  /** Up, but no connection came free (or came up) in time. */
  BUSY: "busy",
  /** Cannot be reached, refuses, or went away. */
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
 * PostgreSQL SQLSTATEs of a server going away or refusing to serve: class 08 (connection
 * exception), admin and crash shutdowns, "cannot connect now" (starting up, shutting down,
 * recovering). Not class 28 (a wrong password or a role without access): that is the deployment's
 * mistake, said in PostgreSQL's own words, not an outage to retry.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith("08") || ["57P01", "57P02", "57P03"].includes(code);
}

/**
 * Too many connections (53300): PostgreSQL is up and serving its max_connections; one more is load,
 * like a full pool.
 */
const BUSY_SQLSTATE = "53300";

/** Prisma's codes for a database it cannot reach or whose connection it lost. */
const PRISMA_UNAVAILABLE = new Set(["P1001", "P1002", "P1008", "P1017"]);

/** Prisma's "Timed out fetching a new connection from the connection pool" and "Too many connections". */
const PRISMA_BUSY = new Set(["P2024", "P2037"]);

/** Driver-adapter error kinds (@prisma/driver-adapter-utils) that mean the server is gone. */
const ADAPTER_KINDS = new Set([
  "DatabaseNotReachable",
  "ConnectionClosed",
  "SocketTimeout",
  "TransactionAlreadyClosed",
]);

/**
 * A wait that ran out, in the words of pg-pool (the queue; a new connection), pg (its own connect
 * timer) and Prisma: busy (see the header).
 */
const BUSY_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout|\btimeout expired$|Timed out fetching a new connection from the connection pool/i;

/** pg and the pool say these in words only. */
const UNAVAILABLE_MESSAGES =
  /Connection terminated|Connection ended unexpectedly|Client has encountered a connection error|server closed the connection|Cannot use a pool after calling end|the database system is (starting up|shutting down)|terminating connection due to administrator command/i;

/**
 * A connection whose prepared statements name types a restore dropped (made again with new ids):
 * lost as if it had gone away, while a new connection is served.
 */
export function isStaleCatalog(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : "";
  return (
    (e?.code === "XX000" && /^cache lookup failed for (type|relation|function)/.test(message)) ||
    (e?.code === "0A000" && /^cached plan must not change result type/.test(message))
  );
}

/**
 * The `code` of an error a pool of one's own gives for a wait that ran out, or for a request it
 * refuses at once: busy. Such an error may carry `retryAfterSeconds`, the pool's own estimate of
 * when it will have room (see retryAfterOf).
 */
export const POOL_QUEUE_FULL = "POOL_QUEUE_FULL";

/** What this one error object (not its causes) says. */
function classifyOne(error: Record<string, unknown>): StoreFailure | null {
  const code = typeof error.code === "string" ? error.code : undefined;
  const sqlState = code && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  const originalCode = typeof error.originalCode === "string" ? error.originalCode : undefined;
  const message = typeof error.message === "string" ? error.message : "";
  if (
    (code && (PRISMA_BUSY.has(code) || code === POOL_QUEUE_FULL)) ||
    sqlState === BUSY_SQLSTATE ||
    originalCode === BUSY_SQLSTATE ||
    error.kind === "TooManyConnections" ||
    BUSY_MESSAGES.test(message)
  )
    return StoreFailure.BUSY;
  if (
    (code && (SOCKET_CODES.has(code) || PRISMA_UNAVAILABLE.has(code))) ||
    (sqlState && isUnavailableSqlState(sqlState)) ||
    (originalCode && isUnavailableSqlState(originalCode)) ||
    (typeof error.kind === "string" && ADAPTER_KINDS.has(error.kind)) ||
    isStaleCatalog(error)
  )
    return StoreFailure.UNAVAILABLE;
  return UNAVAILABLE_MESSAGES.test(message) ? StoreFailure.UNAVAILABLE : null;
}

/**
 * The error, then (depth first, at most 8 deep) its `cause` chain, an AggregateError's errors
 * (IPv4 and IPv6 both refused) and Prisma's driver-adapter error.
 */
function* chainOf(error: unknown, depth = 0): Generator<Record<string, unknown>> {
  if (depth > 8 || error === null || typeof error !== "object") return;
  const e = error as Record<string, unknown>;
  yield e;
  const meta = e.meta as Record<string, unknown> | undefined;
  for (const inner of [
    ...(Array.isArray(e.errors) ? e.errors : []),
    e.cause,
    meta?.driverAdapterError,
  ])
    yield* chainOf(inner, depth + 1);
}

/** Busy, unavailable, or null (not the store's failure): the first error in the chain that says. */
export function classifyStoreFailure(error: unknown): StoreFailure | null {
  for (const e of chainOf(error)) {
    const failure = classifyOne(e);
    if (failure) return failure;
  }
  return null;
}

/** Whether the store could not serve (busy or unavailable): a 503 and a retry, not the caller's. */
export function isStoreUnavailable(error: unknown): boolean {
  return classifyStoreFailure(error) !== null;
}

/**
 * The wait an error suggests before a retry (`retryAfterSeconds`, a positive whole number, in the
 * error's chain), if any: a bounded pool derives it from its drain rate.
 */
export function retryAfterOf(error: unknown): number | undefined {
  for (const { retryAfterSeconds: s } of chainOf(error))
    if (typeof s === "number" && Number.isInteger(s) && s > 0) return s;
  return undefined;
}
