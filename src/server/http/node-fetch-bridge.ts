// A node:http request as a Fetch API Request, and a Fetch API Response written back on the socket:
// what the front door needs to call the app's API handlers (src/server/http/api-routes.ts) without
// Next.js in between. The request is the one Next.js hands a route (the same URL, headers and
// body, an abort signal that fires when the client goes away), made with as little work as that
// takes: its body streams from the socket as the handler reads it (with backpressure), so the
// handler's own doors (the byte limit, the body deadline) see it arrive as they did behind Next.js.
import type http from "node:http";

/**
 * The `x-forwarded-*` headers Next.js's server fills in when a client sent none (its base server,
 * for every request): the handlers' doors read them the same way whoever served the request.
 */
export function fillForwardedHeaders(req: http.IncomingMessage, port: number): void {
  const headers = req.headers;
  headers["x-forwarded-host"] ??= headers.host;
  headers["x-forwarded-port"] ??= String(port);
  headers["x-forwarded-proto"] ??= "http";
  headers["x-forwarded-for"] ??= req.socket.remoteAddress;
}

/** A request whose body the handler stopped reading (over the limit, too slow). */
export interface BridgedRequest {
  request: Request;
  /** True once the handler cancelled the body: the connection is not reused after the answer. */
  bodyAbandoned: () => boolean;
}

export function toFetchRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  origin: string,
): BridgedRequest {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else headers.set(name, value);
  }
  // The client went away before its answer was written: the handler may stop (tRPC passes the
  // signal to the procedures), as behind Next.js.
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  let abandoned = false;
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const request = new Request(`${origin}${req.url ?? "/"}`, {
    method,
    headers,
    signal: controller.signal,
    ...(hasBody
      ? {
          body: bodyStream(req, () => (abandoned = true)),
          duplex: "half",
        }
      : {}),
  } as RequestInit);
  return { request, bodyAbandoned: () => abandoned };
}

/**
 * The request's body as it arrives: paused while the reader is behind (so a fast client's body
 * waits in the socket, not in memory), ended with the request. `onCancel`: the reader gave up.
 */
function bodyStream(req: http.IncomingMessage, onCancel: () => void): ReadableStream<Uint8Array> {
  let done = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      req.on("data", (chunk: Buffer) => {
        if (done) return;
        // A copy, as Next.js makes: the handler keeps chunks until the body is whole.
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.once("end", () => {
        if (done) return;
        done = true;
        controller.close();
      });
      req.once("error", (error) => {
        if (done) return;
        done = true;
        controller.error(error);
      });
      // A client gone mid-body (Node reports "aborted" and closes the request without "end").
      req.once("close", () => {
        if (done) return;
        done = true;
        controller.error(new Error("the client closed the connection before its body was in"));
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      done = true;
      onCancel();
    },
  });
}

/**
 * Writes `response` on `res`, `extraHeaders` first (the response's own headers win, as Next.js
 * lets a route's headers win over next.config.js's). A body in one chunk (every tRPC and webhook
 * answer) goes out with its Content-Length in one write; a streamed one chunk by chunk.
 * `close`: the connection is not reused after it.
 */
export async function writeFetchResponse(
  response: Response,
  res: http.ServerResponse,
  extraHeaders: Readonly<Record<string, string>>,
  close = false,
): Promise<void> {
  for (const name in extraHeaders) res.setHeader(name, extraHeaders[name]!);
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
  if (close) res.shouldKeepAlive = false;
  res.statusCode = response.status;
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    const first = await reader.read();
    if (first.done) {
      res.end();
      return;
    }
    const second = await reader.read();
    if (second.done) {
      if (!res.hasHeader("content-length")) res.setHeader("content-length", first.value.byteLength);
      res.end(first.value);
      return;
    }
    res.write(first.value);
    let chunk: ReadableStreamReadResult<Uint8Array> = second;
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
  } finally {
    if (res.destroyed) void reader.cancel().catch(() => {});
  }
}
