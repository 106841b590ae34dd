// A node:http request as a Fetch API Request, and a Fetch API Response written back on the socket:
// what the front door needs to call the app's API handlers (src/server/edge/api-routes.ts) without
// Next.js in between. The request is the one Next.js hands a route (the same URL, headers and
// body, an abort signal that fires when the client goes away), made once its body is in (read
// under the routes' byte limit and deadline, node-body.ts), with its bytes: one Request per
// request, and none for a body that never comes.
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

/**
 * The request as a Fetch Request, its body (already read whole: node-body.ts) given as `body`; a
 * request without one (GET, HEAD, or a body refused before it was in) gets none. The headers say
 * what the body is now, as they did when a route read it and handed on a request of its own: its
 * length, no transfer coding. Throws when `origin` and the path make no URL.
 */
export function toFetchRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  origin: string,
  body?: Uint8Array,
): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const each of value) headers.append(name, each);
    else headers.set(name, value);
  }
  if (body) {
    headers.delete("transfer-encoding");
    headers.set("content-length", String(body.byteLength));
  }
  // The client went away before its answer was written: the handler may stop (tRPC passes the
  // signal to the procedures), as behind Next.js.
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return new Request(`${origin}${req.url ?? "/"}`, {
    method: req.method ?? "GET",
    headers,
    signal: controller.signal,
    ...(body ? { body: body as BodyInit } : {}),
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
  setHeaders(res, response.headers, extraHeaders);
  if (close) res.shouldKeepAlive = false;
  res.statusCode = response.status;
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    await writeBody(reader, res);
  } finally {
    if (res.destroyed) void reader.cancel().catch(() => {});
  }
}

/** `extraHeaders`, then the response's own over them; every Set-Cookie kept, each its own line. */
function setHeaders(
  res: http.ServerResponse,
  headers: Headers,
  extraHeaders: Readonly<Record<string, string>>,
): void {
  for (const name in extraHeaders) res.setHeader(name, extraHeaders[name]!);
  headers.forEach((value, name) => {
    if (name !== "set-cookie") res.setHeader(name, value);
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) res.setHeader("set-cookie", cookies);
}

/**
 * A body of one chunk in one write with its Content-Length; a longer one chunk by chunk, waiting
 * for the socket to drain, until the body ends or the client goes away.
 */
async function writeBody(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  res: http.ServerResponse,
): Promise<void> {
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
}
