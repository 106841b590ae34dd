// The tRPC HTTP handler, shared by the route and the tests: the same doors, error links and
// logging for both.
import type { AnyRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { MAX_BATCH_SIZE } from "@/shared/batch";
import { Reason } from "@/shared/reasons";
import {
  BODY_READ_DEADLINE_MS,
  boundRequestBodyWithin,
  TRPC_BODY_LIMIT_BYTES,
  trpcPayloadTooLarge,
  trpcRequestTimeout,
  type TimedBody,
} from "../../http/body-limit";
import { logger } from "../logger";
import { refuseCrossSiteMutation } from "./cross-site-guard";
import { describedByHeaders, errorReason } from "./errors";
import { RefusalStage, STORE_REFUSALS, type Refusals } from "../../http/refusals";
import { contextMaker, type ContextApp, type RequestScope } from "./context";
import { appRouter } from "./root";

/** `/api/trpc` as the route serves it: the doors first, then tRPC. */
export async function serveTrpc(req: Request, app: TrpcApp, request: RequestScope = {}) {
  const read = await readTrpcRequest(req, app);
  return read instanceof Response ? read : handleTrpcRequest(read, app, request);
}

/**
 * The doors that need no place among the requests in flight: a cross-site post riding on the
 * session cookie is refused, and the body is read under the byte limit (413) and a deadline (408),
 * so a slow client holds a socket and nothing else. `read`: the body as the front door read it
 * (src/server/edge/node-body.ts). The request with its body in memory, or the refusal.
 */
export async function readTrpcRequest(
  req: Request,
  app: TrpcApp,
  read?: TimedBody,
): Promise<Request | Response> {
  const refused = refuseCrossSiteMutation(req, app.config.http.trustedProxies);
  if (refused) return refused;
  const bounded = await boundRequestBodyWithin(
    req,
    TRPC_BODY_LIMIT_BYTES,
    BODY_READ_DEADLINE_MS,
    read,
  );
  if (bounded.ok) return bounded.request;
  if ("limitBytes" in bounded) {
    app.refusals?.count(Reason.PAYLOAD_TOO_LARGE, RefusalStage.BODY);
    return trpcPayloadTooLarge(bounded.limitBytes);
  }
  app.refusals?.count(Reason.REQUEST_TIMEOUT, RefusalStage.BODY);
  return trpcRequestTimeout(bounded.timedOutMs);
}

/** The app as the tRPC handler uses it: the refusal counters when there are some (tests: none). */
export type TrpcApp = ContextApp & { refusals?: Refusals };

/**
 * tRPC behind the app's edge (context, error links, batch limit, store refusals counted). `router`:
 * the app's; a lab module the front door serves in demo mode passes its own, built from the app's
 * procedures, so it answers through this very edge (scripts/lib/lab-routes.ts).
 */
export function handleTrpcRequest(
  req: Request,
  app: TrpcApp,
  request: RequestScope = {},
  router: AnyRouter = appRouter,
): Promise<Response> {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router,
    createContext: contextMaker(app, request),
    // A longer batch is refused before any of its calls runs (400 batch_too_large).
    maxBatchSize: MAX_BATCH_SIZE,
    // Every error answer points to its explanation on the errors page, and says it is JSON (an
    // error tRPC answers before any procedure comes as text/plain otherwise). The store's
    // refusals are counted once per call.
    responseMeta: ({ errors }) => {
      for (const error of errors) {
        const reason = errorReason(error);
        if (STORE_REFUSALS.has(reason)) app.refusals?.count(reason, RefusalStage.STORE);
      }
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
