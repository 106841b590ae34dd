// The connections one instance holds open (4 000 idle keep-alive sockets slowed answers to 16 s):
// one idle for IDLE_CONNECTION_MS is closed by a sweep, and past MAX_OPEN_CONNECTIONS a new one
// evicts the connection idle longest, else the oldest still sending its request (a slowloris).
// Only with every connection awaiting its answer is the new one closed at once, and counted
// (`too_many_connections`, stage `connection`).
import type http from "node:http";
import type net from "node:net";
import { TOO_MANY_CONNECTIONS } from "./peer-connections";

/** Twice the ~2 000 requests an instance holds waiting; must sit under `ulimit -n`. */
export const MAX_OPEN_CONNECTIONS = 4_096;

/** How long a connection may sit without a request in progress (browsers reuse within 1-2 s). */
export const IDLE_CONNECTION_MS = 5_000;

const SWEEP_MS = 1_000;

export interface OpenConnectionLimits {
  max?: number;
  idleMs?: number;
  onRefuse?: (reason: string) => void;
}

/** Caps `server`'s open connections and closes idle ones. */
export function boundOpenConnections(server: http.Server, limits: OpenConnectionLimits = {}): void {
  const max = limits.max ?? MAX_OPEN_CONNECTIONS;
  const idleMs = limits.idleMs ?? IDLE_CONNECTION_MS;
  // Idle sockets, by when they became idle: the first is the one idle the longest.
  const idle = new Map<net.Socket, number>();
  // Sockets with a request in progress, by when it began.
  const requests = new Map<net.Socket, http.IncomingMessage>();
  let open = 0;
  server.keepAliveTimeout = idleMs;
  server.on("connection", (socket: net.Socket) => {
    if (socket.destroyed) return;
    if (open >= max && !evictOldest(idle) && !evictSlowestSender(requests)) {
      limits.onRefuse?.(TOO_MANY_CONNECTIONS);
      socket.destroy();
      return;
    }
    open++;
    idle.set(socket, performance.now());
    socket.once("close", () => {
      open--;
      idle.delete(socket);
      requests.delete(socket);
    });
  });
  trackRequests(server, idle, requests);
  forgetUpgraded(server, idle);
  const sweep = setInterval(() => closeIdle(idle, idleMs), SWEEP_MS);
  sweep.unref();
  server.once("close", () => clearInterval(sweep));
}

/** A socket is idle from when its last request in progress is answered until its next one. */
function trackRequests(
  server: http.Server,
  idle: Map<net.Socket, number>,
  requests: Map<net.Socket, http.IncomingMessage>,
): void {
  const busy = new WeakMap<net.Socket, number>();
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    idle.delete(socket);
    requests.set(socket, req);
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.once("close", () => {
      const left = (busy.get(socket) ?? 1) - 1;
      busy.set(socket, left);
      if (requests.get(socket) === req) requests.delete(socket);
      if (left === 0 && !socket.destroyed) idle.set(socket, performance.now());
    });
  });
}

/** An upgraded connection (dev's hot reload) is never idle here; listened to only once handled. */
function forgetUpgraded(server: http.Server, idle: Map<net.Socket, number>): void {
  let upgrades = false;
  server.on("newListener", (event: string) => {
    if (event !== "upgrade" || upgrades) return;
    upgrades = true;
    server.prependListener("upgrade", (_req: http.IncomingMessage, socket: net.Socket) =>
      idle.delete(socket),
    );
  });
}

/** Closes the connection idle the longest; false when none is idle. */
function evictOldest(idle: Map<net.Socket, number>): boolean {
  const oldest = idle.keys().next();
  if (oldest.done) return false;
  idle.delete(oldest.value);
  oldest.value.destroy();
  return true;
}

/** Closes the oldest connection still sending its request; false when every request is whole. */
function evictSlowestSender(requests: Map<net.Socket, http.IncomingMessage>): boolean {
  for (const [socket, req] of requests) {
    if (req.complete) continue;
    requests.delete(socket);
    socket.destroy();
    return true;
  }
  return false;
}

/** Closes every connection idle for `idleMs` or longer (the map is in order of idleness). */
function closeIdle(idle: Map<net.Socket, number>, idleMs: number): void {
  const before = performance.now() - idleMs;
  for (const [socket, since] of idle) {
    if (since > before) return;
    idle.delete(socket);
    socket.destroy();
  }
}
