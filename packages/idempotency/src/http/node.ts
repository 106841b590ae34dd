// A Fetch handler (`Request → Response`, what `idempotent` returns) served by Node's own HTTP
// server: `(req, res)` in, so node:http, Express and Fastify (through `reply.raw`) mount it as they
// mount any listener. A request's body streams in unread, unless the server read it first (under
// its own limit) and hands over its bytes; an answer of one chunk (every JSON answer) goes out in
// one write with its length, a longer one chunk by chunk with backpressure.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { fetchHeaders } from "./answer.js";
import { plainProblem } from "./problem.js";
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

export interface ToRequestOptions {
  /** As NodeHandlerOptions.origin. */
  origin?: string;
  /**
   * The body, already read whole by the server (under its own byte limit and deadline): the
   * Request carries these bytes, and headers that say so (their length, no transfer coding).
   */
  body?: Uint8Array;
  /**
   * The answer's response: the Request's signal aborts when it closes before the answer was
   * written (the client went away). Without it, when the request closes before its body was in.
   */
  res?: ServerResponse;
}

/** What Express adds to Node's request: the path as the client sent it, before a router mount. */
type MaybeExpressRequest = IncomingMessage & { originalUrl?: string; body?: unknown };

const BODILESS = new Set(["GET", "HEAD"]);

/** A body parser ran before the listener: the client is told so, not given an empty 500. */
class BodyAlreadyRead extends Error {}

/**
 * The Fetch Request for Node's request: its headers as the server holds them (with any it set
 * itself, as Express and Next.js do), and its body as given or as a stream (not yet read).
 */
export function toRequest(req: IncomingMessage, options: ToRequestOptions = {}): Request {
  const incoming = req as MaybeExpressRequest;
  const base = options.origin ?? `http://${req.headers.host ?? "localhost"}`;
  const url = new URL(incoming.originalUrl ?? req.url ?? "/", base);
  const headers = fetchHeaders(req.headers);
  const method = req.method ?? "GET";
  const init = { method, headers, signal: goneSignal(req, options.res) };
  if (BODILESS.has(method)) return new Request(url, init);
  if (options.body) {
    headers.delete("transfer-encoding");
    headers.set("content-length", String(options.body.byteLength));
    return new Request(url, { ...init, body: options.body as RequestInit["body"] });
  }
  if (req.readableEnded || incoming.body !== undefined)
    throw new BodyAlreadyRead(
      "The request's body was already read (a body parser ran before this route): mount the idempotent route before any body parser, so its fingerprint covers the bytes sent",
    );
  // Node's fetch needs `duplex: "half"` for a streamed body; not every RequestInit type names it.
  const body = Readable.toWeb(req) as ReadableStream<Uint8Array>;
  return new Request(url, { ...init, body, duplex: "half" } as RequestInit);
}

/** Aborts when the client went away before its answer was written (or, without `res`, its body). */
function goneSignal(req: IncomingMessage, res: ServerResponse | undefined): AbortSignal {
  const controller = new AbortController();
  (res ?? req).once("close", () => {
    if (!(res ? res.writableFinished : req.complete)) controller.abort();
  });
  return controller.signal;
}

export interface WriteResponseOptions {
  /** Set first; the response's own headers win over them. */
  headers?: Readonly<Record<string, string>>;
  /** The connection is not reused after this answer. */
  close?: boolean;
}

/** Writes a Fetch Response to Node's response: status, headers (each Set-Cookie apart), body. */
export async function writeResponse(
  response: Response,
  res: ServerResponse,
  options: WriteResponseOptions = {},
): Promise<void> {
  for (const [name, value] of Object.entries(options.headers ?? {})) res.setHeader(name, value);
  for (const [name, value] of response.headers)
    if (name !== "set-cookie") res.setHeader(name, value);
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (options.close) res.shouldKeepAlive = false;
  res.statusCode = response.status;
  if (!response.body) return void res.end();
  const reader = response.body.getReader();
  try {
    await writeBody(reader, res);
  } finally {
    if (res.destroyed) void reader.cancel().catch(() => {});
  }
}

/**
 * A body of one chunk in one write with its Content-Length; a longer one chunk by chunk, waiting
 * for the socket to drain, until the body ends or the client goes away.
 */
async function writeBody(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  res: ServerResponse,
): Promise<void> {
  const first = await reader.read();
  if (first.done) return void res.end();
  let chunk = await reader.read();
  if (chunk.done) {
    if (!res.hasHeader("content-length")) res.setHeader("content-length", first.value.byteLength);
    return void res.end(first.value);
  }
  res.write(first.value);
  while (!chunk.done) {
    if (!res.write(chunk.value))
      await new Promise((resolve) => {
        res.once("drain", resolve);
        res.once("close", resolve);
      });
    if (res.destroyed) return;
    chunk = await reader.read();
  }
  res.end();
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
      const response = await handler(toRequest(req, { origin: options.origin, res }));
      await writeResponse(response, res);
    } catch (error) {
      onError(error);
      if (res.headersSent) return void res.destroy();
      if (!(error instanceof BodyAlreadyRead)) return void res.writeHead(500).end();
      await writeResponse(plainProblem(500, "Internal Server Error", error.message), res);
    }
  };
}
