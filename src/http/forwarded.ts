// What the proxies in front say about a request (X-Forwarded-For, X-Forwarded-Host), believed only
// as far as TRUSTED_PROXIES says there are proxies. Each proxy appends what it saw (or sets the
// header when it is the first), so of a list the rightmost N entries come from our N proxies, the
// Nth from the right from the outermost one (the proxy the client talked to), and everything to
// their left is whatever the client wrote. With no trusted proxy (the default) none of it is
// believed: on a server reached directly, a client writes these headers as it likes, and Next.js
// passes them on (it fills X-Forwarded-Host from Host only when the client sent none).

/**
 * The value the outermost of `trustedProxies` proxies wrote into header `name` (with more hops
 * claimed than the list holds, its leftmost entry); undefined when no proxy is trusted or the
 * header is empty.
 */
export function forwardedByProxy(
  headers: Headers,
  name: "x-forwarded-for" | "x-forwarded-host",
  trustedProxies: number,
): string | undefined {
  if (trustedProxies < 1) return undefined;
  const entries = (headers.get(name) ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) return undefined;
  return entries[Math.max(0, entries.length - trustedProxies)];
}
