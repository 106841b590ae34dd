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

/** Percent-encoding peeled until nothing changes (`%252e` → `%2e` → `.`); null when malformed. */
function fullyDecoded(value: string): string | null {
  let current = value;
  for (let round = 0; round < 4; round++) {
    let next: string;
    try {
      next = decodeURIComponent(current);
    } catch {
      return null;
    }
    if (next === current) return current;
    current = next;
  }
  return null; // encoded four times over: nobody's real link
}

/**
 * `value` resolved against `base` as a browser resolves a Location header: dot segments (also
 * `%2e`) removed. Null unless the result is a path on `base`'s origin that does not start with
 * `//` (`/.//evil.example` resolves to `//evil.example`, another host).
 */
function resolvedPath(value: string, base: URL): string | null {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return null;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  return url.origin === base.origin && path.startsWith("/") && !path.startsWith("//") ? path : null;
}

/**
 * `value` as a same-origin path (with its query and fragment), normalised, or "/" when it is
 * anything else: missing, not starting with one "/", holding a backslash or control character
 * (even percent-encoded), or resolving, as sent or fully decoded, to anything that is not a path
 * on this origin.
 */
export function safeNextPath(value: unknown, origin: string = PLACEHOLDER_ORIGIN): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//")) return "/";
  const decoded = fullyDecoded(value);
  if (decoded === null || FORBIDDEN.test(decoded)) return "/";
  let base: URL;
  try {
    base = new URL(origin);
  } catch {
    return "/";
  }
  // Judged twice: as sent (what the browser will resolve) and decoded (what a page that decodes
  // `next` again would), each after dot segments are resolved.
  const path = resolvedPath(value, base);
  return path !== null && resolvedPath(decoded, base) !== null ? path : "/";
}
