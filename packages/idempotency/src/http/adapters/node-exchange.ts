// One protected request on Node's (req, res), as Express and NestJS (on Express) give it: the
// answer the handler writes is held (held-response.ts) until the key settles, then the edge's
// answer (the first answer, a replay or a refusal) is written for real.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { SqlTransaction } from "../../store/types.js";
import { writeResponse } from "../node.js";
import {
  protect,
  protectionOf,
  type Protection,
  type TransactionRouteContext,
} from "../protect.js";
import { admitParsed, PASS, type AdapterOptions } from "./admit.js";
import { holdResponse } from "./held-response.js";

declare global {
  // Express's request as the app's own packages extend it (express-session's `session`, passport's
  // `user`): empty here, merged with theirs where @types/express is installed.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    // eslint-disable-next-line @typescript-eslint/no-empty-object-type
    interface Request {}
  }
}

/**
 * Node's request as Express leaves it: the URL before a router mount, the parsed body, and what
 * the app's middleware added (`req.session`, `req.user`).
 */
export type NodeRequest = IncomingMessage &
  Express.Request & { originalUrl?: string; body?: unknown };

/** How a framework goes on with the request: to its handler, or past it. */
export interface Continuation {
  /** Runs the route's handler (Express: `next()`; NestJS: `next.handle()`). */
  handle(): void;
  /**
   * The handler will not run (a replay, a refusal): let the framework finish, and resolve once
   * whatever it writes meanwhile is held. Express writes nothing (absent); NestJS replies to the
   * value it is given.
   */
  skip?: () => void;
}

/** An adapter's protection, and the context of each request it runs, for `context(req)`. */
export interface NodeAdapter<TTx extends SqlTransaction, TRequest> {
  protection: Protection<TTx> & { options: AdapterOptions<TTx, TRequest> };
  contexts: WeakMap<object, TransactionRouteContext<TTx>>;
}

export function nodeAdapterOf<TTx extends SqlTransaction, TRequest>(
  options: AdapterOptions<TTx, TRequest>,
): NodeAdapter<TTx, TRequest> {
  return { protection: { ...protectionOf(options), options }, contexts: new WeakMap() };
}

/** The context the adapter gave `request`'s handler; throws for a request it does not protect. */
export function contextOf<TTx extends SqlTransaction>(
  contexts: WeakMap<object, TransactionRouteContext<TTx>>,
  request: object,
): TransactionRouteContext<TTx> {
  const context = contexts.get(request);
  if (!context)
    throw new Error("This request is not protected by this idempotency adapter (no key context)");
  return context;
}

/** Protects one request; false when its method needs no key (the framework goes on alone). */
export async function protectNode<TTx extends SqlTransaction, TRequest extends NodeRequest>(
  adapter: NodeAdapter<TTx, TRequest>,
  req: TRequest,
  res: ServerResponse,
  go: Continuation,
): Promise<boolean> {
  const parsed = { method: req.method ?? "GET", url: req.originalUrl ?? req.url ?? "/" };
  const exchange = await admitParsed(adapter.protection, req, {
    ...parsed,
    headers: req.headers,
    body: req.body,
  });
  if (exchange === PASS) return false;
  const held = holdResponse(res);
  let handled = false;
  try {
    const answer =
      exchange instanceof Response
        ? exchange
        : await protect(adapter.protection, exchange, (context) => {
            handled = true;
            adapter.contexts.set(req, context);
            go.handle();
            return held.answer;
          });
    if (!handled && go.skip) {
      go.skip();
      await held.answer;
    }
    await held.send(answer);
  } catch (error) {
    // The client went away before the answer (the key is released), or the answer failed to write.
    if (!res.headersSent && !res.destroyed)
      await writeResponse(new Response(null, { status: 500 }), res);
    else res.destroy(error as Error);
  }
  return true;
}
