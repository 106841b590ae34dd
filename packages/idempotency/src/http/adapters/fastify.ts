// @once/idempotency/fastify: a Fastify plugin whose hooks protect the routes of the context it is
// registered in, as they are: preHandler (after Fastify parsed the body and your auth ran) takes
// the key, onSend hands the handler's serialized answer to the key before the client sees it.
//   const orders = idempotency({ engine, scope: (request: FastifyRequest) => request.user.sub });
//   await app.register(orders);
// A handler that writes through the key's transaction takes it with `orders.context(request).tx`.
import type { IncomingHttpHeaders } from "node:http";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import type { SqlTransaction } from "../../store/types.js";
import { protect, type TransactionRouteContext } from "../protect.js";
import { responseFrom } from "../answer.js";
import { admitParsed, PASS, type AdapterOptions } from "./admit.js";
import { contextOf, nodeAdapterOf, type NodeAdapter } from "./node-exchange.js";

export type { AdapterOptions as FastifyIdempotencyOptions } from "./admit.js";

/** What the plugin reads of Fastify's request and reply (Fastify's own types fit these). */
interface FastifyRequestLike {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body?: unknown;
}
interface FastifyReplyLike {
  statusCode: number;
  raw: { once(event: "close", listener: () => void): unknown };
  code(status: number): unknown;
  header(name: string, value: unknown): unknown;
  getHeaders(): Record<string, unknown>;
  removeHeader(name: string): unknown;
  send(payload?: unknown): unknown;
}
interface FastifyInstanceLike {
  addHook(name: string, hook: (...args: any[]) => unknown): unknown;
}

/** The plugin (`app.register(orders)`) and the context of each request it protects. */
export interface FastifyIdempotency<TTx, TRequest> {
  (instance: FastifyInstanceLike, options: unknown): Promise<void>;
  /** The protected request's key and scope, and `tx` unless `transaction: false`. */
  context(request: TRequest): TransactionRouteContext<TTx>;
}

/** A request whose handler runs: its answer, given to the key in onSend, and what follows. */
interface Flight {
  answer: { resolve(answer: Response): void; reject(error: Error): void };
  settled: Promise<Response>;
  before: Set<string>;
}

export function idempotency<
  TTx extends SqlTransaction,
  TRequest extends object = FastifyRequestLike,
>(options: AdapterOptions<TTx, TRequest>): FastifyIdempotency<TTx, TRequest> {
  const plugin: Plugin<TTx, TRequest> = { ...nodeAdapterOf(options), flights: new WeakMap() };
  const register = async (instance: FastifyInstanceLike) => {
    instance.addHook(
      "preHandler",
      (request: TRequest & FastifyRequestLike, reply: FastifyReplyLike) =>
        preHandler(plugin, request, reply),
    );
    instance.addHook("onSend", (request: TRequest, reply: FastifyReplyLike, payload: unknown) =>
      onSend(plugin, request, reply, payload),
    );
  };
  // As fastify-plugin does: the hooks apply to the context the plugin is registered in.
  Object.assign(register, { [Symbol.for("skip-override")]: true });
  return Object.assign(register, {
    context: (request: TRequest) => contextOf(plugin.contexts, request),
  });
}

/** One registration's protection, and the requests it is running. */
interface Plugin<TTx extends SqlTransaction, TRequest> extends NodeAdapter<TTx, TRequest> {
  flights: WeakMap<object, Flight>;
}

/** Takes the key: the handler runs within the protocol, or the edge answers in its place. */
async function preHandler<TTx extends SqlTransaction, TRequest extends object>(
  plugin: Plugin<TTx, TRequest>,
  request: TRequest & FastifyRequestLike,
  reply: FastifyReplyLike,
) {
  const exchange = await admitParsed(plugin.protection, request, request);
  if (exchange === PASS) return;
  if (exchange instanceof Response) return sendFetch(reply, exchange);
  let answer!: Flight["answer"];
  const answered = new Promise<Response>((resolve, reject) => (answer = { resolve, reject }));
  let started!: () => void;
  const start = new Promise<null>((resolve) => (started = () => resolve(null)));
  const settled = protect(plugin.protection, exchange, (context) => {
    plugin.contexts.set(request, context);
    started();
    return answered;
  });
  settled.catch(() => {}); // read in onSend; a client gone meanwhile leaves it unread
  const early = await Promise.race([start, settled]);
  if (early) return sendFetch(reply, early); // a replay or a refusal: the handler does not run
  reply.raw.once("close", () => answer.reject(new Error("The client closed the connection")));
  plugin.flights.set(request, {
    answer,
    settled,
    before: new Set(Object.keys(reply.getHeaders())),
  });
}

/** Gives the handler's serialized answer to the key; sends what the edge answers once it settled. */
async function onSend<TTx extends SqlTransaction, TRequest extends object>(
  plugin: Plugin<TTx, TRequest>,
  request: TRequest,
  reply: FastifyReplyLike,
  payload: unknown,
) {
  const flight = plugin.flights.get(request);
  if (!flight) return payload;
  plugin.flights.delete(request);
  flight.answer.resolve(responseOf(reply, payload));
  const final = await flight.settled;
  for (const name of Object.keys(reply.getHeaders()))
    if (!flight.before.has(name)) reply.removeHeader(name);
  setStatusAndHeaders(reply, final);
  return final.body ? Readable.fromWeb(final.body as NodeReadableStream) : null;
}

/** The handler's answer as Fastify serialized it, as a Fetch Response. */
function responseOf(reply: FastifyReplyLike, payload: unknown): Response {
  let body: ConstructorParameters<typeof Response>[0] = null;
  if (payload instanceof Readable) body = Readable.toWeb(payload) as ReadableStream<Uint8Array>;
  else if (typeof payload === "string") body = payload;
  else if (payload instanceof Uint8Array) body = new Uint8Array(payload);
  return responseFrom(reply.statusCode, reply.getHeaders(), body);
}

function setStatusAndHeaders(reply: FastifyReplyLike, response: Response): void {
  reply.code(response.status);
  const cookies = response.headers.getSetCookie();
  for (const [name, value] of response.headers)
    if (name !== "set-cookie") reply.header(name, value);
  if (cookies.length > 0) reply.header("set-cookie", cookies);
}

/** Sends the edge's own answer (a replay, a refusal) from a hook. */
async function sendFetch(reply: FastifyReplyLike, response: Response) {
  setStatusAndHeaders(reply, response);
  const body = response.body ? Buffer.from(await response.arrayBuffer()) : undefined;
  reply.send(body);
  return reply;
}
