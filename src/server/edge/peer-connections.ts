// A cap on the connections one peer address holds open: thousands from one address are an attack,
// not a crowd. Past it a new connection is closed at once, and counted (`too_many_connections`).
// Off (0) unless HTTP_MAX_CONNECTIONS_PER_PEER says so: behind a proxy or a NAT many clients share
// one address.
import type net from "node:net";

export const TOO_MANY_CONNECTIONS = "too_many_connections";

export interface PeerConnectionCap {
  /** The cap now (0: none). */
  max: () => number;
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
