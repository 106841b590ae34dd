// The connections one instance holds open: a cap on them all, and a short life for an idle one.
// Each open socket costs a file descriptor, memory, and the server's timers; 4 000 keep-alive
// sockets left idle after one request each slowed the API's answers to 16 s, and 3 087 were still
// open 25 s later. So:
//
// - A connection with no request in progress (kept alive after its answer, or opened and silent)
//   is closed once it has been idle IDLE_CONNECTION_MS, by a sweep every second.
// - Past MAX_OPEN_CONNECTIONS, a new connection takes the place of the connection idle the
//   longest, which is closed; with none idle, of the oldest one still sending its request (a slow
//   body: the crowd a slowloris brings). Only with every connection waiting for its answer is the
//   new one closed as soon as it is accepted, before a byte is parsed, and counted
//   (once_http_refusals_total{reason="too_many_connections",stage="connection"}). A crowd of idle
//   or slow sockets therefore never keeps out a client that has something to ask.
import type http from "node:http";
import type net from "node:net";
import { TOO_MANY_CONNECTIONS } from "./peer-connections";

/**
 * Connections open at once on one instance. The instance serves a few dozen requests at once and
 * keeps about two thousand waiting for their answer (the API's line, its lanes' lines, the waiters
 * on a key in flight); twice that is room for all of them and for every client a balancer or a
 * crowd of browsers keeps open, below the file-descriptor limit a server is given (the cap must
 * sit under `ulimit -n`, or the process's accepts fail first).
 */
export const MAX_OPEN_CONNECTIONS = 4_096;

/**
 * How long a connection may sit without a request in progress. A browser reuses its connection
 * within a second or two of a page; an API client's pool within its requests' spacing.
 */
export const IDLE_CONNECTION_MS = 5_000;

/** How often idle connections are looked for. */
const SWEEP_MS = 1_000;

export interface OpenConnectionLimits {
  /** The cap (MAX_OPEN_CONNECTIONS unless told: tests). */
  max?: number;
  /** The idle time (IDLE_CONNECTION_MS unless told: tests). */
  idleMs?: number;
  /** Told of each new connection closed because every place is in use. */
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

/**
 * A connection handed to an upgrade handler (`npm run dev`'s hot reload) is no longer HTTP's:
 * never idle here. Listened to only once someone handles upgrades: with no listener, Node answers
 * an upgrade as any other request.
 */
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

/**
 * Closes the connection that began its request the longest ago and has not sent all of it yet;
 * false when every request is whole (they wait for their answers: none is closed).
 */
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
