// Next.js hands a route handler a Request without its socket, and fills X-Forwarded-For from the
// socket only when the client sent none, so a client that sends one hides its real address. This
// writes the socket's peer address into `x-once-peer-address` on every request the Node server
// receives (replacing anything a client sent under that name) before Next.js reads the headers,
// so src/server/http/client-address.ts can know who is on the other end.
import http from "node:http";
import { PEER_ADDRESS_HEADER } from "./client-address";

const INSTALLED = Symbol.for("once.peerAddressHeader");
const TIMED = Symbol.for("once.serverTimeouts");

/**
 * How long a client may take to send its headers, and its whole request (headers and body), before
 * Node closes the socket (408). Node's defaults (60 s, 300 s) let one slow socket live for five
 * minutes; a real client sends its headers in one packet and an API body (64 KiB at most) in well
 * under a second. The handler gives up on a body sooner (body-limit.ts, 10 s); these bound what
 * reaches no handler at all. Node checks them every 30 s, so a socket may outlive them by that much.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Patches http.Server so every request carries its peer's address, and every server the slow-client
 * timeouts above. Once per process.
 */
export function installPeerAddressHeader(): void {
  const proto = http.Server.prototype as http.Server & { [INSTALLED]?: true };
  if (proto[INSTALLED]) return;
  proto[INSTALLED] = true;
  const emit = proto.emit;
  proto.emit = function emitWithPeer(
    this: http.Server,
    event: string | symbol,
    ...args: unknown[]
  ) {
    if (event === "connection" && !(this as { [TIMED]?: true })[TIMED]) {
      // Next.js makes the server and sets neither: set on its first connection, before any
      // request on it is parsed (Node reads both when it checks its connections).
      (this as { [TIMED]?: true })[TIMED] = true;
      this.headersTimeout = HEADERS_TIMEOUT_MS;
      this.requestTimeout = REQUEST_TIMEOUT_MS;
    }
    if (event === "request") {
      const req = args[0] as http.IncomingMessage;
      const peer = req.socket?.remoteAddress;
      if (peer) req.headers[PEER_ADDRESS_HEADER] = peer;
      else delete req.headers[PEER_ADDRESS_HEADER];
    }
    return (emit as (...all: unknown[]) => boolean).apply(this, [event, ...args]);
  } as typeof proto.emit;
}
