// The tRPC HTTP handler, shared by the route and the tests: the same error links and logging for
// both.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { logger } from "../logger";
import { describedByHeaders } from "./errors";
import { contextMaker, type ContextApp } from "./context";
import { routerFor } from "./root";

export function handleTrpcRequest(req: Request, app: ContextApp): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    // The app's router, plus the bench's control procedure on a server started for `npm run bench:http`.
    router: routerFor({ benchControl: app.config.benchControl }),
    createContext: contextMaker(app),
    // Every error answer points to its explanation on the errors page.
    responseMeta: ({ errors }) => ({ headers: describedByHeaders(errors) }),
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}
