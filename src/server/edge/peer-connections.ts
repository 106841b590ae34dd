// A cap on the connections one peer address holds open at once. Slow bodies hold no admission place
// (the body is read, under a deadline, before the request takes one), but every open connection
// still costs the server a file descriptor and some memory until its deadline: thousands from one
// address are an attack, not a crowd (browsers open six per site; an API client a pool of tens).
// Past the cap a new connection from that address is closed as soon as it is accepted, before a
// byte of it is parsed, and counted (once_http_refusals_total{reason="too_many_connections",
// stage="connection"}).
//
// Off (0) unless HTTP_MAX_CONNECTIONS_PER_PEER says so: behind a proxy every connection comes from
// the proxy's address, and many clients behind one NAT share one. Set it on an instance that faces
// clients directly.
import type net from "node:net";

export const TOO_MANY_CONNECTIONS = "too_many_connections";

export interface PeerConnectionCap {
  /** The cap now (0: none); read at each new connection. */
  max: () => number;
  /** Told of each connection closed for being past the cap. */
  onRefuse: () => void;
}

/** Closes each new connection from an address that already holds `max()` open. */
export function capConnectionsPerPeer(server: net.Server, cap: PeerConnectionCap): void {
  const open = new Map<string, number>();
  server.on("connection", (socket: net.Socket) => {
    const peer = socket.remoteAddress;
    const max = cap.max();
    if (peer === undefined || !(max > 0)) return;
    const held = open.get(peer) ?? 0;
    if (held >= max) {
      cap.onRefuse();
      socket.destroy();
      return;
    }
    open.set(peer, held + 1);
    socket.once("close", () => {
      const left = (open.get(peer) ?? 1) - 1;
      if (left > 0) open.set(peer, left);
      else open.delete(peer);
    });
  });
}
