// @once/idempotency/express: an Express middleware that protects the routes after it as they are.
//   const orders = idempotency({ engine, scope: (req) => req.session.userId });
//   app.use("/orders", orders); // after express.json() and your session; before the routes
// A handler that writes through the key's transaction takes it with `orders.context(req).tx`.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SqlTransaction } from "../../store/types.js";
import type { RouteContext, TransactionRouteContext } from "../protect.js";
import type { AdapterOptions } from "./admit.js";
import { contextOf, nodeAdapterOf, protectNode, type NodeRequest } from "./node-exchange.js";

export type { AdapterOptions as ExpressIdempotencyOptions } from "./admit.js";

/** An Express middleware (`app.use`, `router.use`, or in a route's own list) and its contexts. */
export interface IdempotencyMiddleware<TTx, TRequest> {
  (req: TRequest, res: ServerResponse, next: (error?: unknown) => void): void;
  /** The protected request's key and scope, and `tx` unless `transaction: false`. */
  context(req: TRequest): TransactionRouteContext<TTx>;
}

/**
 * Protects every request after it whose method needs a key (POST and PATCH by default): the first
 * runs the route's handler, whose answer (`res.json`, `res.send`, `res.status(…).end`) is stored
 * with the key; every retry gets it back byte for byte. Mount it after the body parser
 * (`express.json()`): the fingerprint reads `req.body`.
 */
export function idempotency<
  TTx extends SqlTransaction,
  TRequest extends IncomingMessage = NodeRequest,
>(options: AdapterOptions<TTx, TRequest>): IdempotencyMiddleware<TTx, TRequest> {
  const adapter = nodeAdapterOf(options);
  const middleware = (req: TRequest, res: ServerResponse, next: (error?: unknown) => void) => {
    protectNode(adapter, req as TRequest & NodeRequest, res, { handle: () => next() }).then(
      (handled) => handled || next(),
      next,
    );
  };
  return Object.assign(middleware, {
    context: (req: TRequest) => contextOf(adapter.contexts, req as object),
  });
}

export type { RouteContext, TransactionRouteContext };
