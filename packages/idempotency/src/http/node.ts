// A Fetch handler (`Request → Response`, what `idempotent` returns) served by Node's own HTTP
// server: `(req, res)` in, so node:http, Express and Fastify (through `reply.raw`) mount it as they
// mount any listener. Bodies stream both ways with backpressure: nothing is read whole here.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { PROBLEM_TYPE } from "./problem.js";
import type { FetchHandler } from "./route.js";

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface NodeHandlerOptions {
  /**
   * The origin the Request's URL is built on (default `http://<Host header>`). Only the path and
   * query enter a fingerprint; give it when the handler reads `request.url`'s origin.
   */
  origin?: string;
  /**
   * Told of an error the handler threw (the key is already released): the client gets a bare 500.
   * Default: console.error.
   */
  onError?: (error: unknown) => void;
}

/** What Express adds to Node's request: the path as the client sent it, before a router mount. */
type MaybeExpressRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

const BODILESS = new Set(["GET", "HEAD"]);

/** A body parser ran before the listener: the client is told so, not given an empty 500. */
class BodyAlreadyRead extends Error {}

/** The Fetch Request for Node's request: its headers, and its body as a stream (not yet read). */
export function toRequest(req: IncomingMessage, origin?: string): Request {
  const incoming = req as MaybeExpressRequest;
  const base = origin ?? `http://${req.headers.host ?? "localhost"}`;
  const url = new URL(incoming.originalUrl ?? req.url ?? "/", base);
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2)
    headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
  const method = req.method ?? "GET";
  const controller = new AbortController();
  req.once("close", () => {
    if (!req.complete) controller.abort();
  });
  if (BODILESS.has(method)) return new Request(url, { method, headers, signal: controller.signal });
  if (req.readableEnded || incoming.body !== undefined)
    throw new BodyAlreadyRead(
      "The request's body was already read (a body parser ran before this route): mount the idempotent route before any body parser, so its fingerprint covers the bytes sent",
    );
  // Node's fetch needs `duplex: "half"` for a streamed body; not every RequestInit type names it.
  const init = {
    method,
    headers,
    body: Readable.toWeb(req) as ReadableStream<Uint8Array>,
    signal: controller.signal,
    duplex: "half",
  };
  return new Request(url, init as RequestInit);
}

/** Writes a Fetch Response to Node's response: status, headers (each Set-Cookie apart), body. */
export async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  const cookies = response.headers.getSetCookie();
  for (const [name, value] of response.headers)
    if (name !== "set-cookie") res.setHeader(name, value);
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (!response.body) {
    res.end();
    return;
  }
  await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), res);
}

/**
 * `handler` as a Node listener: `createServer(toNodeHandler(route))`, `app.post("/refunds",
 * toNodeHandler(route))` in Express (before any body parser), or in Fastify
 * `reply.hijack(); await listener(request.raw, reply.raw)` on a route whose body Fastify leaves
 * unread.
 */
export function toNodeHandler(
  handler: FetchHandler,
  options: NodeHandlerOptions = {},
): NodeHandler {
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  return async function nodeListener(req, res) {
    try {
      const response = await handler(toRequest(req, options.origin));
      await writeResponse(response, res);
    } catch (error) {
      onError(error);
      if (res.headersSent) return void res.destroy();
      if (!(error instanceof BodyAlreadyRead)) return void res.writeHead(500).end();
      const problem = { type: "about:blank", title: "Internal Server Error", status: 500 };
      res.writeHead(500, { "content-type": PROBLEM_TYPE });
      res.end(JSON.stringify({ ...problem, detail: error.message }));
    }
  };
}
