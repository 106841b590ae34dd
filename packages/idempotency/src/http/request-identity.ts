// What makes two HTTP requests "the same request" under one key: method, path, query, content type
// and body. A JSON body is compared as canonical JSON (a retry that serialises the same document
// with another member order or spacing still matches), any other body by its bytes.
import { createHash } from "node:crypto";

/** The request's body, read up to a limit: past it, reading stops (a 413, nothing recorded). */
export type BoundedBody = { ok: true; bytes: Uint8Array } | { ok: false };

export async function readBody(request: Request, maxBytes: number): Promise<BoundedBody> {
  const declared = Number(request.headers.get("content-length") ?? 0);
  if (declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    return { ok: false };
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  const reader = request.body?.getReader();
  // A body without Content-Length (chunked) is counted as it arrives and abandoned past the limit.
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    length += part.value.byteLength;
    if (length > maxBytes) {
      await reader!.cancel().catch(() => {});
      return { ok: false };
    }
    parts.push(part.value);
  }
  return { ok: true, bytes: Buffer.concat(parts, length) };
}

/** Media type and parameters, lower-cased, without spaces: `application/json;charset=utf-8`. */
function normalisedContentType(value: string | null): string {
  return (value ?? "").toLowerCase().replace(/\s+/g, "");
}

const isJsonType = (contentType: string) =>
  /^application\/(?:[\w.+-]+\+)?json(?:;|$)/.test(contentType);

/**
 * Whether JSON text holds a number a double cannot keep exactly (more than 15 significant digits,
 * or out of range): two such documents that differ could parse to the same value, so their bytes
 * are compared instead.
 */
export function hasInexactNumber(text: string): boolean {
  const number = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++; // skip the string
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      number.lastIndex = i;
      const token = number.exec(text)?.[0] ?? c;
      const digits = token
        .replace(/[eE].*$/, "")
        .replace(/[-.]/g, "")
        .replace(/^0+/, "")
        .replace(/0+$/, "");
      if (digits.length > 15 || !Number.isFinite(Number(token))) return true;
      i += token.length - 1;
    }
  }
  return false;
}

/** The body as fingerprinted: the parsed document when it is JSON, else the bytes' SHA-256. */
function bodyIdentity(contentType: string, bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) return null;
  if (isJsonType(contentType)) {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
    try {
      const document: unknown = JSON.parse(text);
      if (!hasInexactNumber(text)) return { json: document };
    } catch {
      // not JSON after all: compared by its bytes, and the handler answers it
    }
  }
  return { sha256: createHash("sha256").update(bytes).digest("hex") };
}

/**
 * The query's parameters, ordered by name (the values of one name keep their order: it may matter).
 */
function queryIdentity(url: URL): [string, string][] {
  return [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The input the engine fingerprints (with the operation's name) for this request. */
export function requestIdentity(request: Request, url: URL, body: Uint8Array): unknown {
  const contentType = normalisedContentType(request.headers.get("content-type"));
  return identityOf(request.method, url, contentType, bodyIdentity(contentType, body));
}

/**
 * The same, for a request whose body a framework already parsed (`req.body`): a parsed value (a
 * JSON document, form fields) is fingerprinted as canonical JSON, as the bytes of a JSON body are;
 * bytes or text a raw parser kept are fingerprinted as bytes; no body (undefined) as none.
 */
export function parsedRequestIdentity(
  method: string,
  url: URL,
  contentTypeHeader: string | undefined,
  body: unknown,
): unknown {
  const contentType = normalisedContentType(contentTypeHeader ?? null);
  return identityOf(method, url, contentType, parsedBodyIdentity(contentType, body));
}

function parsedBodyIdentity(contentType: string, body: unknown): unknown {
  if (body === undefined || body === null) return null;
  if (body instanceof Uint8Array) return bodyIdentity(contentType, body);
  if (typeof body === "string" && !isJsonType(contentType))
    return bodyIdentity(contentType, Buffer.from(body, "utf8"));
  return { json: body };
}

function identityOf(method: string, url: URL, contentType: string, body: unknown): unknown {
  return {
    method: method.toUpperCase(),
    path: url.pathname,
    query: queryIdentity(url),
    contentType,
    body,
  };
}
