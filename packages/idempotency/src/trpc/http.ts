// How the middleware reads the request's headers and sets the answer's, and the one adapter
// nearly every app needs: tRPC's fetch adapter (Next.js App Router, Remix, Hono…).
import type { FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";

/** How the middleware reads and writes HTTP on your context. */
export interface HttpAccess {
  header(name: string): string | null | undefined;
  setHeader(name: string, value: string): void;
  /** Calls in this HTTP request: a key on a batch of several is refused. */
  batchSize: number;
  /**
   * Optional: runs this request's sleep while it waits for another to settle (`Prefer: wait`), so
   * a server that bounds its requests in progress can count the sleeper out meanwhile.
   */
  whileWaiting?: <T>(sleep: () => Promise<T>) => Promise<T>;
}

/**
 * The HttpAccess of a request through `fetchRequestHandler`: call it in `createContext` and put
 * the result on your context, e.g. `createContext: (opts) => ({ ...yours, http:
 * fetchHttpAccess(opts) })`.
 */
export function fetchHttpAccess(
  opts: Pick<FetchCreateContextFnOptions, "req" | "resHeaders" | "info">,
): HttpAccess {
  return {
    header: (name) => opts.req.headers.get(name),
    setHeader: (name, value) => opts.resHeaders.set(name, value),
    batchSize: opts.info.calls.length,
  };
}
