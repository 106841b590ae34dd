// HAProxy in front of the instances, configured the way teams do to ride out a dying backend, which
// is exactly what makes it dangerous for a checkout: on a refused connection, an empty response or
// a response timeout it re-sends the request (a POST included) to another server. A slow checkout
// that outlives `timeout server` has been processed, or is being processed, by the first server
// when HAProxy sends it again: the idempotency key is what keeps that from ordering twice.
import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { acceptsConnections, waitFor } from "../../tools/process";
import { startChild, type Child } from "./processes";

export interface HaproxyOptions {
  port: number;
  backends: number[];
  serverTimeoutMs: number;
  /**
   * Requests in flight per instance; the rest wait in HAProxy's queue (time that does not count
   * against the server timeout). Without it, 64 clients on a small machine queue inside the
   * instances, every request outlives the server timeout, and the retries feed the storm.
   */
  maxconnPerServer: number;
  dir: string;
}

export function haproxyConfig(o: HaproxyOptions): string {
  const servers = o.backends
    .map(
      (port, i) =>
        `  server app${i + 1} 127.0.0.1:${port} maxconn ${o.maxconnPerServer} check inter 1s fastinter 500ms fall 2 rise 1`,
    )
    .join("\n");
  return `# Written by lab/soak/haproxy.ts for one soak run.
global
  maxconn 2000
  # One line per request in haproxy.log (termination state, timers, retries): why an answer was a 503/504.
  log stdout format raw local0

defaults
  mode http
  log global
  option httplog
  timeout connect 500ms
  timeout client 30s
  # Shorter than the slow checkouts: HAProxy gives up on them and re-sends (retry-on response-timeout).
  timeout server ${o.serverTimeoutMs}ms
  timeout queue 15s
  timeout http-request 10s
  # A busy instance on a loaded machine may take a while to answer its health check: slow is not dead.
  timeout check 5s

frontend soak
  bind 127.0.0.1:${o.port}
  default_backend app

backend app
  balance roundrobin
  # Re-send on every failure a dying or stalled backend produces, POSTs included.
  retry-on conn-failure empty-response response-timeout
  retries 2
  option redispatch 1
  # A killed instance is taken out within a second; a restarted one comes back once Next.js answers
  # (200, or 503 while PostgreSQL is away: the instance is fine, the database is not).
  option httpchk GET /api/health
  http-check expect rstatus ^(200|503)$
${servers}
`;
}

export function startHaproxy(o: HaproxyOptions): Child {
  const file = path.join(o.dir, "haproxy.cfg");
  writeFileSync(file, haproxyConfig(o));
  return startChild("haproxy", "haproxy", ["-f", file, "-db"], {
    logFile: path.join(o.dir, "haproxy.log"),
  });
}

export async function waitForPort(
  what: string,
  port: number,
  timeoutMs: number,
  child?: Child,
): Promise<void> {
  await waitFor(what, () => acceptsConnections(port), timeoutMs, child);
}

export interface PrimaryProxyOptions {
  port: number;
  /** Each Patroni node: its PostgreSQL port and its REST port (the health check). */
  nodes: { pg: number; rest: number }[];
  dir: string;
}

/**
 * HAProxy in TCP mode in front of a Patroni cluster: only the node whose REST API answers 200 on
 * /primary takes connections, and when a node stops being the primary, `shutdown-sessions` cuts
 * the connections still open to it, so the app's pool reconnects (to the new primary) instead of
 * writing to a demoted node or waiting on a dead one.
 */
export function primaryProxyConfig(o: PrimaryProxyOptions): string {
  const servers = o.nodes
    .map((n, i) => `  server pg${i + 1} 127.0.0.1:${n.pg} check port ${n.rest}`)
    .join("\n");
  return `# Written by lab/soak/haproxy.ts for one soak run: the PostgreSQL primary, wherever it is.
global
  maxconn 2000
  log stdout format raw local0
  stats socket ${statsSocket(o)} mode 600

defaults
  mode tcp
  log global
  option tcplog
  timeout connect 1s
  # A pooled connection or the LISTEN connection may sit idle for long: not a reason to cut it.
  timeout client 30m
  timeout server 30m
  timeout check 2s

frontend postgres
  bind 127.0.0.1:${o.port}
  default_backend primary

backend primary
  option httpchk GET /primary
  http-check expect status 200
  default-server inter 500ms fastinter 250ms fall 2 rise 1 on-marked-down shutdown-sessions
${servers}
`;
}

const statsSocket = (o: { dir: string }) => path.join(o.dir, "haproxy-postgres.sock");

/**
 * The servers HAProxy sends connections to now (status UP), read from its stats socket. HAProxy
 * starts with every server UP until its first checks say otherwise, so a connection made right
 * after start may land on a standby: the soak waits until exactly the primary is UP.
 */
export function serversUp(o: { dir: string }): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(statsSocket(o));
    let text = "";
    socket.on("data", (chunk) => (text += chunk.toString()));
    socket.on("end", () => {
      const rows = text.split("\n").map((line) => line.split(","));
      resolve(
        rows
          .filter((r) => r[0] === "primary" && r[1] !== "BACKEND" && r[17]?.startsWith("UP"))
          .map((r) => r[1]!),
      );
    });
    socket.on("error", reject);
    socket.end("show stat\n");
  });
}

export function startPrimaryProxy(o: PrimaryProxyOptions): Child {
  const file = path.join(o.dir, "haproxy-postgres.cfg");
  writeFileSync(file, primaryProxyConfig(o));
  return startChild("haproxy-postgres", "haproxy", ["-f", file, "-db"], {
    logFile: path.join(o.dir, "haproxy-postgres.log"),
  });
}
