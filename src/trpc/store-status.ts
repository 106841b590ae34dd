// "The shop cannot reach its database": every query answers 5xx while PostgreSQL is down (503
// `store_unavailable` by design; a 500 from an older path means the same to a visitor). Pages
// must then say so, instead of drawing conclusions from the missing data ("product no longer
// sold", "sign in"), and come back by themselves once the database is back.

/** How often a query that failed this way asks again: the outage demo restarts in seconds. */
export const STORE_RECOVERY_POLL_MS = 2_000;

interface ErrorLike {
  data?: { httpStatus?: unknown; reason?: unknown } | null;
}

/** True when the server answered that it cannot serve this right now (any 5xx). */
export function isStoreUnreachable(error: unknown): boolean {
  if (error == null || typeof error !== "object") return false;
  const data = (error as ErrorLike).data;
  if (data?.reason === "store_unavailable") return true;
  return typeof data?.httpStatus === "number" && data.httpStatus >= 500;
}

/** React Query's `refetchInterval` for any query: poll while the store is unreachable, else not. */
export function recoveryInterval(query: { state: { error: unknown } }): number | false {
  return isStoreUnreachable(query.state.error) ? STORE_RECOVERY_POLL_MS : false;
}
