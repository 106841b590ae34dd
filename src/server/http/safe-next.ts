// Where to send a person after signing in: only a path on this site. `next` comes from a query
// string or a form, so an attacker writes it; a redirect to their site from ours is a phishing
// link that starts on a trusted address (an open redirect).
//
// Browsers read `/\evil.example` as `//evil.example`, and drop tabs and newlines from URLs
// (`/%09/evil.example` decodes to `/<tab>/evil.example`, then `//evil.example`), so anything with a
// backslash or a control character is refused outright, decoded or not, before WHATWG URL
// parsing decides what remains.

/** Any origin works for checking path-ness: only "same origin as the base" matters. */
const PLACEHOLDER_ORIGIN = "http://once.invalid";

// eslint-disable-next-line no-control-regex -- finding control characters is the point
const FORBIDDEN = /[\\\u0000-\u001f\u007f]/;

function decodedOrNull(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch {
    return null;
  }
}

/**
 * `value` as a same-origin path (with its query and fragment), or "/" when it is anything else:
 * missing, not starting with one "/", holding a backslash or control character (even
 * percent-encoded), or resolving to another origin.
 */
export function safeNextPath(value: unknown, origin: string = PLACEHOLDER_ORIGIN): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//")) return "/";
  const decoded = decodedOrNull(value);
  if (decoded === null || FORBIDDEN.test(value) || FORBIDDEN.test(decoded) || decoded.startsWith("//")) return "/";
  let url: URL;
  let base: URL;
  try {
    base = new URL(origin);
    url = new URL(value, base);
  } catch {
    return "/";
  }
  if (url.origin !== base.origin) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}
