// The tRPC HTTP handler, shared by the route and the tests: the same doors, error links and
// logging for both.
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { MAX_BATCH_SIZE } from "@/shared/batch";
import { boundRequestBody, TRPC_BODY_LIMIT_BYTES, trpcPayloadTooLarge } from "../http/body-limit";
import { logger } from "../logger";
import { refuseCrossSiteMutation } from "./cross-site-guard";
import { describedByHeaders } from "./errors";
import { contextMaker, type ContextApp, type RequestScope } from "./context";
import { routerFor } from "./root";

/** `/api/trpc` as the route serves it: the doors first, then tRPC. */
export async function serveTrpc(
  req: Request,
  app: ContextApp,
  request: RequestScope = {},
): Promise<Response> {
  // A cross-site post riding on the session cookie is refused before tRPC sees it.
  const refused = refuseCrossSiteMutation(req, app.config.http.trustedProxies);
  if (refused) return refused;
  // Bodies over the limit are 413 before they are read whole (src/server/http/body-limit.ts).
  const bounded = await boundRequestBody(req, TRPC_BODY_LIMIT_BYTES);
  if (!bounded.ok) return trpcPayloadTooLarge(bounded.limitBytes);
  return handleTrpcRequest(bounded.request, app, request);
}

export function handleTrpcRequest(
  req: Request,
  app: ContextApp,
  request: RequestScope = {},
): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    // The app's router, plus the bench's control procedure on a server started for `npm run
    // bench:http`.
    router: routerFor({ benchControl: app.config.benchControl }),
    createContext: contextMaker(app, request),
    // A longer batch is refused before any of its calls runs (400 batch_too_large,
    // src/shared/batch.ts).
    maxBatchSize: MAX_BATCH_SIZE,
    // Every error answer points to its explanation on the errors page, and says it is JSON: an
    // error tRPC answers before any procedure (a batch over maxBatchSize) comes as text/plain
    // with a JSON body otherwise.
    responseMeta: ({ errors }) => {
      const headers = describedByHeaders(errors);
      headers?.set("content-type", "application/json");
      return { headers };
    },
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR")
        logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}
