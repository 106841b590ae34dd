// The client's address, for the sign-in throttle. Who vouches for it:
//
//   - the socket's peer, which the server itself writes into `x-once-peer-address` on every
//     request (src/server/edge/front-door.ts), replacing anything a client sent under that name;
//   - a proxy in front, which appends the address it saw to X-Forwarded-For. Only as many of those
//     entries are believed as TRUSTED_PROXIES says there are proxies: the rightmost N hops are
//     ours, the entry before them is the client. Everything further left is whatever the client
//     wrote, which is why X-Forwarded-For is not believed at all by default: on a server reached
//     directly, rotating it would hand out a fresh budget per request
//     (src/http/forwarded.ts).
import { forwardedByProxy } from "./forwarded";

export const PEER_ADDRESS_HEADER = "x-once-peer-address";

/** Long enough for any IPv6 address with a zone; a longer value is not an address. */
const MAX_LENGTH = 64;

const usable = (value: string | undefined) =>
  value && value.length <= MAX_LENGTH ? value : undefined;

/**
 * `trustedProxies`: how many proxies stand between the clients and this server (0: none, the
 * peer is the client). With more hops claimed than the chain holds, the leftmost is used.
 */
export function clientAddress(headers: Headers, trustedProxies = 0): string {
  const peer = headers.get(PEER_ADDRESS_HEADER)?.trim();
  if (!peer) return "unknown";
  // The address the outermost proxy saw; with no proxy trusted (or none appended), the peer itself.
  return usable(forwardedByProxy(headers, "x-forwarded-for", trustedProxies) ?? peer) ?? "unknown";
}
