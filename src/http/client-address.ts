// The client's address, for the sign-in throttle: the socket's peer, which the front door writes
// into `x-once-peer-address` (replacing a client's), or the address our outermost trusted proxy
// appended to X-Forwarded-For (forwarded.ts): a client's own entries would buy a fresh budget.
import { forwardedByProxy } from "./forwarded";

export const PEER_ADDRESS_HEADER = "x-once-peer-address";

/** Long enough for any IPv6 address with a zone; a longer value is not an address. */
const MAX_LENGTH = 64;

const usable = (value: string | undefined) =>
  value && value.length <= MAX_LENGTH ? value : undefined;

/** `trustedProxies`: how many proxies stand in front (0: the peer is the client). */
export function clientAddress(headers: Headers, trustedProxies = 0): string {
  const peer = headers.get(PEER_ADDRESS_HEADER)?.trim();
  if (!peer) return "unknown";
  return usable(forwardedByProxy(headers, "x-forwarded-for", trustedProxies) ?? peer) ?? "unknown";
}
