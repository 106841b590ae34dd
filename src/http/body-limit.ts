// Request bodies are read only up to a limit: a declared Content-Length over it is refused before a
// byte is read, and a body without one (chunked) is counted as it streams and abandoned the moment
// it passes the limit. Whatever the client sends, the server holds at most `limit` bytes of it
// (plus the one chunk that crossed the line), so a 100 MB body costs no more memory than a small
// one.

import { describedByLink, Reason, reasonDocsPath } from "@/shared/reasons";
import { plainError } from "./plain-error";

/**
 * tRPC bodies: the largest legitimate one is a checkout of 20 lines (~2 KiB) or an admin action
 * with its 500-character reason; 64 KiB leaves room for thirty times that and nothing more.
 */
export const TRPC_BODY_LIMIT_BYTES = 64 * 1024;

/** The provider's webhook events are ~300 bytes; real providers' stay well under 64 KiB too. */
export const WEBHOOK_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The sign-in form: an e-mail (320), a password (1 024 characters, up to 12 KiB percent-encoded)
 * and a path to return to. It used to be read whole whatever its size (a 100 MB form took 1.6 s and
 * its memory before the throttle even looked at it); 64 KiB like the other doors is plenty.
 */
export const SIGN_IN_BODY_LIMIT_BYTES = 64 * 1024;

export const PAYLOAD_TOO_LARGE = Reason.PAYLOAD_TOO_LARGE;

/**
 * How long an API body may take to arrive, from when the handler starts reading it. The largest
 * legitimate body (64 KiB) crosses even a poor mobile link in well under a second; a client that
 * sends one byte every few seconds is holding a socket open, not uploading. Past this the request
 * is answered `408 request_timeout` and its socket is left to the server's own request timeout.
 * The body is read before the request takes an admission place (the tRPC route), so until then a
 * slow body holds a socket and nothing else.
 */
export const BODY_READ_DEADLINE_MS = 10_000;

export type BoundedBody = { ok: true; bytes: Uint8Array } | { ok: false; limitBytes: number };
/** As BoundedBody, or the body did not arrive within the deadline. */
export type TimedBody = BoundedBody | { ok: false; timedOutMs: number };

/** The whole body if it fits in `limitBytes`; otherwise stops reading and says so. */
export async function readBoundedBody(request: Request, limitBytes: number): Promise<BoundedBody> {
  return readBody(request, limitBytes, 0) as Promise<BoundedBody>;
}

/**
 * A body the server in front of the route has read already (the front door, node-body.ts, under
 * the same deadline), judged by this route's limit: what reading it here would have said.
 */
export function readAlready(body: TimedBody, limitBytes: number): TimedBody {
  return body.ok && body.bytes.byteLength > limitBytes ? { ok: false, limitBytes } : body;
}

/**
 * readBoundedBody, also stopping (and saying so) when the body is not in after `deadlineMs`.
 * `read`: the body as the front door read it (then the request carries those bytes already).
 */
export async function readBodyWithin(
  request: Request,
  limitBytes: number,
  deadlineMs: number,
  read?: TimedBody,
): Promise<TimedBody> {
  return read ? readAlready(read, limitBytes) : readBody(request, limitBytes, deadlineMs);
}

async function readBody(
  request: Request,
  limitBytes: number,
  deadlineMs: number,
): Promise<TimedBody> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > limitBytes) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, limitBytes };
  }
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  // Cancelling the reader ends the pending read (done); the flag says why it ended.
  let timedOut = false;
  const timer =
    deadlineMs > 0
      ? setTimeout(() => {
          timedOut = true;
          void reader.cancel().catch(() => {});
        }, deadlineMs)
      : undefined;
  try {
    return await collect(reader, limitBytes, () => timedOut, deadlineMs);
  } finally {
    clearTimeout(timer);
  }
}

async function collect(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  limitBytes: number,
  timedOut: () => boolean,
  deadlineMs: number,
): Promise<TimedBody> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      if (timedOut()) return { done: true as const, value: undefined };
      throw error;
    });
    if (timedOut()) return { ok: false, timedOutMs: deadlineMs };
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      // Tell the stream (and, through it, the socket) we will read no more.
      await reader.cancel().catch(() => {});
      return { ok: false, limitBytes };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { ok: true, bytes };
}

export type BoundedRequest = { ok: true; request: Request } | { ok: false; limitBytes: number };
export type TimedRequest = BoundedRequest | { ok: false; timedOutMs: number };

/**
 * The request with its body read (bounded) and handed on as a new Request, for a handler that
 * reads the body itself (tRPC). Requests without a body pass through untouched.
 */
export async function boundRequestBody(
  request: Request,
  limitBytes: number,
): Promise<BoundedRequest> {
  return boundRequestBodyWithin(request, limitBytes, 0) as Promise<BoundedRequest>;
}

/**
 * boundRequestBody under a deadline too (0: none). `read`: the body as the front door read it
 * (node-body.ts); the request it built carries those bytes already and is handed on as it is.
 */
export async function boundRequestBodyWithin(
  request: Request,
  limitBytes: number,
  deadlineMs: number,
  read?: TimedBody,
): Promise<TimedRequest> {
  if (request.method === "GET" || request.method === "HEAD") return { ok: true, request };
  if (read) {
    const judged = readAlready(read, limitBytes);
    return judged.ok ? { ok: true, request } : judged;
  }
  const body = await readBody(request, limitBytes, deadlineMs);
  if (!body.ok) return body;
  const headers = new Headers(request.headers);
  headers.delete("transfer-encoding");
  headers.set("content-length", String(body.bytes.byteLength));
  return {
    ok: true,
    request: new Request(request.url, {
      method: request.method,
      headers,
      body: body.bytes as BodyInit,
      signal: request.signal,
    }),
  };
}

export const tooLargeMessage = (limitBytes: number) =>
  `The request body is larger than ${limitBytes} bytes`;
const timedOutMessage = (deadlineMs: number) =>
  `The request body did not arrive within ${deadlineMs / 1000} s; nothing was executed`;
const docs = reasonDocsPath(Reason.PAYLOAD_TOO_LARGE);
/** Like every error answer: the explanation's address, also as a Link header (IETF draft). */
const tooLargeInit: ResponseInit = {
  status: 413,
  headers: { Link: describedByLink(Reason.PAYLOAD_TOO_LARGE) },
};

/** 413 in tRPC's error shape, with the reason and the docs link every error carries. */
export function trpcPayloadTooLarge(limitBytes: number): Response {
  const data = { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, reason: PAYLOAD_TOO_LARGE, docs };
  return Response.json(
    { error: { message: tooLargeMessage(limitBytes), code: -32600, data } },
    tooLargeInit,
  );
}

/** 408 in tRPC's error shape: the body did not arrive in time, and nothing was executed. */
export function trpcRequestTimeout(deadlineMs: number): Response {
  const data = {
    code: "TIMEOUT",
    httpStatus: 408,
    reason: Reason.REQUEST_TIMEOUT,
    docs: reasonDocsPath(Reason.REQUEST_TIMEOUT),
  };
  return Response.json(
    { error: { message: timedOutMessage(deadlineMs), code: -32008, data } },
    // The socket is a slow one: the client gets no second request on it.
    {
      status: 408,
      headers: { Link: describedByLink(Reason.REQUEST_TIMEOUT), Connection: "close" },
    },
  );
}

/** 408 for a plain route: `{ error, reason, docs }`, and the slow socket is not reused. */
export function jsonRequestTimeout(deadlineMs: number): Response {
  return plainError(408, Reason.REQUEST_TIMEOUT, timedOutMessage(deadlineMs), {
    Connection: "close",
  });
}

/** 413 for a plain route: `{ error, reason, docs }`. */
export function jsonPayloadTooLarge(limitBytes: number): Response {
  return plainError(413, Reason.PAYLOAD_TOO_LARGE, tooLargeMessage(limitBytes));
}
