// The handler's Response as stored, and a Response rebuilt from what was stored: the status, the
// content type, the allow-listed headers and the body's exact bytes.
import { isAscii, isUtf8 } from "node:buffer";
import type { StoredResponse } from "../store/types.js";

/**
 * Headers replayed with an answer unless the route names its own list: they describe the answer
 * itself (where it is, what it is), not the connection or the caller. `Set-Cookie` is never
 * replayed, whatever the list says: a replay must not hand out a session.
 */
export const DEFAULT_REPLAYED_HEADERS = [
  "cache-control",
  "content-disposition",
  "content-language",
  "content-location",
  "etag",
  "expires",
  "last-modified",
  "link",
  "location",
] as const;

/** Never stored: cookies, and what describes one transfer rather than the answer. */
const NEVER_REPLAYED = new Set([
  "set-cookie",
  "content-type",
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "date",
]);

export function replayedHeaderNames(
  names: readonly string[] = DEFAULT_REPLAYED_HEADERS,
): Set<string> {
  return new Set(
    names.map((name) => name.toLowerCase()).filter((name) => !NEVER_REPLAYED.has(name)),
  );
}

/**
 * The body as text when it is UTF-8 that PostgreSQL's text type can hold (no NUL): decoding and
 * encoding again then gives the same bytes (a byte-order mark included: Buffer keeps it).
 * Otherwise undefined, and the bytes are stored as bytes.
 */
function asText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0) || !isUtf8(bytes)) return undefined;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buffer.toString(isAscii(bytes) ? "latin1" : "utf8"); // latin1 is the fast path for ASCII, same characters
}

/**
 * The handler's answer as captured: what is stored, and the bytes to send first. An answer within
 * the stored-size limit is read whole (`bytes`; `rest` absent). A larger one is read only until it
 * crosses the limit: `bytes` holds what was read (about the limit), `rest` the stream of what
 * follows, sent to the client after the key settles and never held whole in memory.
 */
export interface Captured {
  response: StoredResponse;
  bytes: Uint8Array;
  rest?: ReadableStream<Uint8Array>;
}

/**
 * The size of a body stored without it: the declared Content-Length when the handler gave one,
 * else the bytes read before the limit was crossed (a lower bound: the rest is streamed, uncounted,
 * after the key is stored).
 */
function omittedSize(response: Response, read: number): number {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  return Number.isSafeInteger(declared) && declared >= read ? declared : read;
}

/**
 * Reads the handler's answer up to `maxStoredBytes`. Within it, the body is stored (as text when it
 * is UTF-8, else as bytes); past it, the outcome is stored without its body and the rest is left
 * unread in `rest`, to be streamed to the client.
 */
export async function capture(
  response: Response,
  replayed: Set<string>,
  maxStoredBytes: number,
): Promise<Captured> {
  const { bytes, rest } = await readUpTo(response.body, maxStoredBytes);
  const headers = [...response.headers].filter(([name]) => replayed.has(name));
  const text = rest ? undefined : asText(bytes);
  const stored: StoredResponse = {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    body: text ?? "",
    ...(rest ? { omittedBytes: omittedSize(response, bytes.byteLength) } : {}),
    ...(text === undefined && !rest ? { bytes } : {}),
    ...(headers.length > 0 ? { headers } : {}),
  };
  return rest ? { response: stored, bytes, rest } : { response: stored, bytes };
}

/**
 * Reads a body until it ends or crosses `maxBytes`: what was read, and (when it crossed) the
 * unread rest as a stream.
 */
async function readUpTo(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; rest?: ReadableStream<Uint8Array> }> {
  const parts: Uint8Array[] = [];
  let length = 0;
  let rest: ReadableStream<Uint8Array> | undefined;
  const reader = body?.getReader();
  if (reader) {
    for (;;) {
      const part = await reader.read();
      if (part.done) break;
      parts.push(part.value);
      length += part.value.byteLength;
      if (length > maxBytes) {
        rest = remainderOf(reader);
        break;
      }
    }
  }
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length);
  return rest ? { bytes, rest } : { bytes };
}

/**
 * The unread rest of a body (after `head`, the bytes read first), as a stream that pulls from the
 * reader as the client takes it: backpressure all the way.
 */
function remainderOf(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  head?: Uint8Array,
): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const first = head;
      head = undefined;
      if (first?.byteLength) return controller.enqueue(first);
      const part = await reader.read();
      if (part.done) controller.close();
      else controller.enqueue(part.value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** What a Response is made of (the DOM's BodyInit, which the package's Node types do not name). */
type ResponseBody = ConstructorParameters<typeof Response>[0];

/** 204, 205 and 304 answers have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/** Node's headers (each a value, a list of values, or undefined) as Fetch Headers. */
export function fetchHeaders(record: Readonly<Record<string, unknown>>): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(record))
    for (const each of [value].flat()) if (each !== undefined) headers.append(name, String(each));
  return headers;
}

/** An answer a framework wrote (its status, Node's headers, its body) as a Fetch Response. */
export function responseFrom(
  status: number,
  headers: Readonly<Record<string, unknown>>,
  body: ResponseBody,
): Response {
  const bodyless = NULL_BODY_STATUSES.has(status);
  return new Response(bodyless ? null : body, { status, headers: fetchHeaders(headers) });
}

/** The stored body's bytes (text encoded as UTF-8: the bytes it was decoded from). */
function bodyOf(response: StoredResponse): Uint8Array {
  return response.bytes ?? Buffer.from(response.body, "utf8");
}

/**
 * A Response from the stored answer (or, on the first answer, from the bytes read and the rest of
 * the handler's stream), with `headers` (the handler's own on the first answer, the stored ones on
 * a replay) and `extra` set over them. An answer stored without its body replays its status and
 * headers with an empty body: never another status or a body of another kind.
 */
export function rebuild(
  response: StoredResponse,
  headers: ConstructorParameters<typeof Headers>[0],
  extra: Headers,
  bytes = bodyOf(response),
  rest?: ReadableStream<Uint8Array>,
): Response {
  const all = new Headers(headers);
  // The runtime sets the length from a whole body; a streamed one keeps the handler's declaration.
  if (!rest) all.delete("content-length");
  if (response.contentType) all.set("content-type", response.contentType);
  for (const [name, value] of extra) all.set(name, value);
  if (NULL_BODY_STATUSES.has(response.status)) {
    void rest?.cancel();
    return new Response(null, { status: response.status, headers: all });
  }
  const body = rest ? remainderOf(rest.getReader(), bytes) : bytes;
  return new Response(body as ResponseBody, { status: response.status, headers: all });
}
