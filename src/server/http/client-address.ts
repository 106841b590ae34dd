// The client's address, for the sign-in throttle. Next.js puts the socket's address into
// X-Forwarded-For only when the request has none, and a proxy appends the address it saw: the
// last entry is the one the nearest hop vouches for. Behind a proxy (HAProxy `option forwardfor`,
// any load balancer) that is the real client; a server exposed directly keeps whatever the client
// wrote, which is why the per-account budget never depends on this.

/** Long enough for any IPv6 address with a zone; a longer value is not an address. */
const MAX_LENGTH = 64;

export function clientAddress(headers: Headers): string {
  const hops = (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map((h) => h.trim())
    .filter(Boolean);
  const last = hops.at(-1);
  return last && last.length <= MAX_LENGTH ? last : "unknown";
}
