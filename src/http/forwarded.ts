// What the proxies in front say (X-Forwarded-For, -Host), believed only as far as TRUSTED_PROXIES
// says there are proxies: each appends, so the Nth entry from the right is the outermost's, and
// everything left of it is the client's own writing. With no trusted proxy, none is believed.

/** What the outermost of `trustedProxies` proxies wrote into `name` (too few entries: the first). */
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
