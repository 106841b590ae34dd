// Request bodies are read only up to a limit: a declared Content-Length over it is refused before a
// byte is read, a chunked body is abandoned the moment it passes it, so a 100 MB body costs no more
// memory than a small one.
import { describedByLink, Reason, reasonDocsPath } from "@/shared/reasons";
import { plainError } from "./plain-error";

/** tRPC bodies: the largest legitimate one (a 20-line checkout) is ~2 KiB. */
export const TRPC_BODY_LIMIT_BYTES = 64 * 1024;

/** The provider's webhook events are ~300 bytes; real providers' stay well under 64 KiB too. */
export const WEBHOOK_BODY_LIMIT_BYTES = 64 * 1024;

/** The sign-in form: an e-mail, a password (up to 12 KiB percent-encoded) and a path. */
export const SIGN_IN_BODY_LIMIT_BYTES = 64 * 1024;

export const PAYLOAD_TOO_LARGE = Reason.PAYLOAD_TOO_LARGE;

/**
 * How long a body may take to arrive: 64 KiB crosses a poor mobile link in under a second; a client
 * sending a byte every few seconds is holding a socket, not uploading. Past it: `408`.
 */
export const BODY_READ_DEADLINE_MS = 10_000;

/** The whole body, or why not: over `limitBytes`, or not in within the deadline. */
export type TimedBody =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; limitBytes: number }
  | { ok: false; timedOutMs: number };

/** A body the front door held already (node-body.ts), judged by this route's limit. */
function readAlready(body: TimedBody, limitBytes: number): TimedBody {
  return body.ok && body.bytes.byteLength > limitBytes ? { ok: false, limitBytes } : body;
}

/**
 * The whole body within `limitBytes` and `deadlineMs` (0: none), else why not; `read`: the body as
 * the front door held it (the request carries those bytes already).
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
  return { ok: true, bytes: Buffer.concat(chunks, size) };
}

export type TimedRequest = { ok: true; request: Request } | Exclude<TimedBody, { ok: true }>;

/**
 * The request with its body read as readBodyWithin does, handed on as a new Request for a handler
 * that reads the body itself; one without a body, or with `read`, passes through as it is.
 */
export async function boundRequestBodyWithin(
  request: Request,
  limitBytes: number,
  deadlineMs = 0,
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

/** 413 in tRPC's error shape, with the reason and the docs link every error carries. */
export function trpcPayloadTooLarge(limitBytes: number): Response {
  const data = { code: "PAYLOAD_TOO_LARGE", httpStatus: 413, reason: PAYLOAD_TOO_LARGE, docs };
  return Response.json(
    { error: { message: tooLargeMessage(limitBytes), code: -32600, data } },
    { status: 413, headers: { Link: describedByLink(Reason.PAYLOAD_TOO_LARGE) } },
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
