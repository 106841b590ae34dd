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

/** The handler's answer, read whole: as stored, and its bytes as sent first. */
export interface Captured {
  response: StoredResponse;
  bytes: Uint8Array;
}

/**
 * Reads the handler's answer. A body larger than `maxStoredBytes` is kept as bytes without being
 * decoded: it will be stored without it anyway.
 */
export async function capture(
  response: Response,
  replayed: Set<string>,
  maxStoredBytes: number,
): Promise<Captured> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const headers = [...response.headers].filter(([name]) => replayed.has(name));
  const text = bytes.byteLength <= maxStoredBytes ? asText(bytes) : undefined;
  const stored: StoredResponse = {
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    ...(text === undefined ? { body: "", bytes } : { body: text }),
    ...(headers.length > 0 ? { headers } : {}),
  };
  return { response: stored, bytes };
}

/** What a Response is made of (the DOM's BodyInit, which the package's Node types do not name). */
type ResponseBody = ConstructorParameters<typeof Response>[0];

/** 204, 205 and 304 answers have no body (the Response constructor refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The stored body's bytes (text encoded as UTF-8: the bytes it was decoded from). */
function bodyOf(response: StoredResponse): Uint8Array {
  return response.bytes ?? Buffer.from(response.body, "utf8");
}

/**
 * A Response from the stored answer (or, on the first answer, from the bytes read), with `headers`
 * (the handler's own on the first answer, the stored ones on a replay) and `extra` set over them.
 */
export function rebuild(
  response: StoredResponse,
  headers: ConstructorParameters<typeof Headers>[0],
  extra: Headers,
  bytes = bodyOf(response),
): Response {
  const all = new Headers(headers);
  all.delete("content-length"); // the runtime sets it from the body
  if (response.contentType) all.set("content-type", response.contentType);
  for (const [name, value] of extra) all.set(name, value);
  const body = NULL_BODY_STATUSES.has(response.status) ? null : (bytes as ResponseBody);
  return new Response(body, { status: response.status, headers: all });
}
