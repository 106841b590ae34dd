// The tRPC HTTP handler, shared by the route and the tests: the same error links and logging for
// both.
import { fetchRequestHandler, type FetchCreateContextFnOptions } from "@trpc/server/adapters/fetch";
import { logger } from "../logger";
import type { Context } from "./context";
import { describedByHeaders } from "./errors";
import { servedRouter } from "./root";

export function handleTrpcRequest(req: Request, createContext: (opts: FetchCreateContextFnOptions) => Context): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    // The app's router, plus the bench's control procedure on a server started for `npm run bench:http`.
    router: servedRouter(),
    createContext,
    // Every error answer points to its explanation on the errors page.
    responseMeta: ({ errors }) => ({ headers: describedByHeaders(errors) }),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}
