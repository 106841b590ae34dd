// Next.js hands a route handler a Request without its socket, and fills X-Forwarded-For from the
// socket only when the client sent none, so a client that sends one hides its real address. This
// writes the socket's peer address into `x-once-peer-address` on every request the Node server
// receives (replacing anything a client sent under that name) before Next.js reads the headers,
// so src/server/http/client-address.ts can know who is on the other end.
import http from "node:http";
import { PEER_ADDRESS_HEADER } from "./client-address";

const INSTALLED = Symbol.for("once.peerAddressHeader");

/** Patches http.Server so every request carries its peer's address. Once per process. */
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
    if (event === "request") {
      const req = args[0] as http.IncomingMessage;
      const peer = req.socket?.remoteAddress;
      if (peer) req.headers[PEER_ADDRESS_HEADER] = peer;
      else delete req.headers[PEER_ADDRESS_HEADER];
    }
    return (emit as (...all: unknown[]) => boolean).apply(this, [event, ...args]);
  } as typeof proto.emit;
}
