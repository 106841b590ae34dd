// @once/idempotency/nestjs: a NestJS interceptor (on @nestjs/platform-express), put on a route by a
// decorator; it runs after your guards, so the scope reads the user they put on the request.
//   export const orders = idempotency({ engine, scope: (req) => req.user?.id });
//   @Post() @Idempotent(orders) place(@Body() body: NewOrder) { … }   // unchanged
// A handler that writes through the key's transaction takes it with `orders.context(req).tx`.
import type { ServerResponse } from "node:http";
import { UseInterceptors } from "@nestjs/common";
import type { SqlTransaction } from "../../store/types.js";
import type { TransactionRouteContext } from "../protect.js";
import type { AdapterOptions } from "./admit.js";
import {
  contextOf,
  nodeAdapterOf,
  protectNode,
  type NodeAdapter,
  type NodeRequest,
} from "./node-exchange.js";

export type { AdapterOptions as NestIdempotencyOptions } from "./admit.js";

/** What the interceptor reads of Nest's ExecutionContext and CallHandler (Nest's own types). */
interface ExecutionContext {
  switchToHttp(): { getRequest<T>(): T; getResponse<T>(): T };
}
interface CallHandler {
  handle(): {
    subscribe(observer: {
      next(value: unknown): void;
      error(error: unknown): void;
      complete(): void;
    }): unknown;
  };
}

/** The routes' protection: give it to `@Idempotent(…)`; `context(req)` in a protected handler. */
export interface NestIdempotency<TTx, TRequest> {
  interceptor: IdempotencyInterceptor;
  /** The protected request's key and scope, and `tx` unless `transaction: false`. */
  context(req: TRequest): TransactionRouteContext<TTx>;
}

export function idempotency<TTx extends SqlTransaction, TRequest extends object = NodeRequest>(
  options: AdapterOptions<TTx, TRequest>,
): NestIdempotency<TTx, TRequest> {
  const adapter = nodeAdapterOf(options) as NodeAdapter<TTx, unknown>;
  return {
    interceptor: new IdempotencyInterceptor(adapter),
    context: (req) => contextOf(adapter.contexts, req),
  };
}

/**
 * Marks a route as protected: the first request with a key runs it, and what Nest replies (the
 * value it returns, the exception it throws) is stored with the key and given back to every retry
 * byte for byte.
 */
export function Idempotent(protection: NestIdempotency<unknown, never>): MethodDecorator {
  return UseInterceptors(protection.interceptor);
}

/**
 * The interceptor. It answers Nest with an async iterable (Nest takes any ObservableInput from an
 * interceptor), so the package needs no rxjs of its own.
 */
export class IdempotencyInterceptor {
  constructor(private readonly adapter: NodeAdapter<SqlTransaction, unknown>) {}

  intercept(context: ExecutionContext, next: CallHandler): AsyncIterable<unknown> {
    const http = context.switchToHttp();
    return reply(this.adapter, http.getRequest<NodeRequest>(), http.getResponse(), next);
  }
}

type Result = { value: unknown } | { error: unknown };

/** The value Nest replies with: the handler's, or nothing while the edge writes its own answer. */
async function* reply(
  adapter: NodeAdapter<SqlTransaction, unknown>,
  req: NodeRequest,
  res: ServerResponse,
  next: CallHandler,
): AsyncGenerator<unknown> {
  let settle!: (result: Result) => void;
  const result = new Promise<Result>((resolve) => (settle = resolve));
  const handle = () => {
    let last: unknown;
    next.handle().subscribe({
      next: (value) => (last = value),
      error: (error) => settle({ error }),
      complete: () => settle({ value: last }),
    });
  };
  protectNode(adapter, req, res, { handle, skip: () => settle({ value: undefined }) }).then(
    (handled) => handled || handle(),
    (error: unknown) => settle({ error }),
  );
  const outcome = await result;
  if ("error" in outcome) throw outcome.error;
  yield outcome.value;
}
