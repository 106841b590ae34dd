// The Idempotency-Key header (draft-ietf-httpapi-idempotency-key-header): 1–255 visible ASCII
// characters, sent bare (`abc`) or as an RFC 8941 sf-string (`"abc"`, with \" and \\ escapes).
// A header that begins with a double quote is read as an sf-string: a key that itself begins with
// `"` must be sent quoted (`"\"abc"`), otherwise the two forms would be ambiguous.
import { Reason } from "./reasons.js";

export const MAX_KEY_LENGTH = 255;

export type ParsedKey =
  | { ok: true; key: string }
  | { ok: false; reason: typeof Reason.KEY_MISSING | typeof Reason.KEY_INVALID; message: string };

const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

function invalid(message: string): ParsedKey {
  return { ok: false, reason: Reason.KEY_INVALID, message };
}

export function parseIdempotencyKey(header: string | null | undefined): ParsedKey {
  if (!header?.trim()) {
    const message = "This request needs an Idempotency-Key header";
    return { ok: false, reason: Reason.KEY_MISSING, message };
  }
  let key = header.trim();
  if (key.startsWith('"')) {
    // RFC 8941 sf-string: DQUOTE *( unescaped / "\" ( DQUOTE / "\" ) ) DQUOTE, printable ASCII
    // only.
    const match = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(key);
    if (!match) return invalid("Idempotency-Key is not a valid quoted string (RFC 8941)");
    key = match[1]!.replace(/\\(["\\])/g, "$1");
  }
  if (key.length === 0) return invalid("Idempotency-Key is empty");
  if (key.length > MAX_KEY_LENGTH)
    return invalid(`Idempotency-Key is longer than ${MAX_KEY_LENGTH} characters`);
  if (!VISIBLE_ASCII.test(key))
    return invalid("Idempotency-Key may hold only visible ASCII characters");
  return { ok: true, key };
}
