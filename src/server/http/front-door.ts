// The HTTP server in front of Next.js (Next.js's documented custom server: scripts/front-door.ts
// makes it and hands Next.js's request handler to it). It owns what Next.js's own server leaves to
// chance:
//
// - Timeouts a slow client cannot stretch: its headers within HEADERS_TIMEOUT_MS, its whole request
//   within REQUEST_TIMEOUT_MS, checked every second (Node's defaults: 60 s and 300 s, checked every
//   30 s). The API route also gives up on a body after 10 s (body-limit.ts) before it takes a place.
// - The peer's address, from the socket, in `x-once-peer-address` (replacing anything a client
//   sent under that name): Next.js hands a route a Request without its socket
//   (src/server/http/client-address.ts).
// - A refusal where it is cheap: an API request that the instance's admission would refuse now
//   (src/server/http/admission.ts: the queue full, or no place expected within its patience) is
//   answered `503 store_busy` here, with its Retry-After, before Next.js routes it, parses its URL
//   or reads its body (the connection kept when the body is small: see keepsConnection). The
//   route's own admission decides again for what passes.
import http from "node:http";
import { PEER_ADDRESS_HEADER } from "./client-address";
import { capConnectionsPerPeer, TOO_MANY_CONNECTIONS } from "./peer-connections";

/**
 * How long a client may take to send its headers, and its whole request (headers and body). A real
 * client sends its headers in one packet and an API body (64 KiB at most) in well under a second;
 * a page's request has no body.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node looks for connections past those timeouts (its default, 30 s, triples them). */
export const CONNECTIONS_CHECK_MS = 1_000;

/** What the front door needs of the app (the composition root, src/server/app.ts). */
export interface DoorApp {
  admission: { refusalNow(waitMs?: number): Response | undefined };
  engine: { config: { maxWaitMs: number } };
  /** The cap on connections per peer address (peer-connections.ts), and its refusal counter. */
  config?: { http?: { maxConnectionsPerPeer?: number } };
  refusals?: { count(reason: string, stage: "connection"): void };
}

export interface FrontDoorOptions {
  /** Next.js's request handler (`app.getRequestHandler()`). */
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  /** The app once it exists (instrumentation makes it at start-up); undefined until then. */
  app: () => DoorApp | undefined;
  /** `Prefer: wait` in seconds, as the engine reads it. */
  parsePreferWait: (header: string | null | undefined) => number | undefined;
}

export function createFrontDoor(options: FrontDoorOptions): http.Server {
  const server = http.createServer(
    {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
    },
    (req, res) => {
      const peer = req.socket.remoteAddress;
      if (peer) req.headers[PEER_ADDRESS_HEADER] = peer;
      else delete req.headers[PEER_ADDRESS_HEADER];
      if (req.url?.startsWith("/api/trpc/") && refusedAtTheDoor(req, res, options)) return;
      options.handle(req, res).catch((error: unknown) => {
        console.error(`[once] request failed: ${(error as Error).message}`);
        if (!res.headersSent) res.writeHead(500).end();
      });
    },
  );
  capConnectionsPerPeer(server, {
    max: () => options.app()?.config?.http?.maxConnectionsPerPeer ?? 0,
    onRefuse: () => options.app()?.refusals?.count(TOO_MANY_CONNECTIONS, "connection"),
  });
  return server;
}

/** True when the request was answered here (refused), without Next.js. */
function refusedAtTheDoor(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: FrontDoorOptions,
): boolean {
  const app = options.app();
  // Not made yet, or made by a build older than this door: the route decides alone.
  if (typeof app?.admission.refusalNow !== "function") return false;
  const preferred = options.parsePreferWait(headerOf(req, "prefer")) ?? 0;
  const waitMs = Math.min(preferred * 1000, app.engine.config.maxWaitMs);
  const refusal = app.admission.refusalNow(waitMs);
  if (!refusal) return false;
  void writeRefusal(refusal, res, keepsConnection(req));
  return true;
}

/**
 * A refused request's connection stays open when its body is small and declared (Node reads and
 * drops it before the next request): a closed one costs the client a new connection and the
 * server an accept and a socket per refusal, which for a crowd that re-sends at once is most of a
 * refusal's CPU. An undeclared (chunked) or large body closes it instead of being read.
 */
function keepsConnection(req: http.IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return false;
  return Number(req.headers["content-length"] ?? 0) <= KEEP_ALIVE_BODY_BYTES;
}

/** The largest refused body still read and dropped to keep its connection: an API body's limit. */
const KEEP_ALIVE_BODY_BYTES = 64 * 1024;

function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** Writes a web Response on the socket; `keep`: the connection stays open after it. */
async function writeRefusal(
  refusal: Response,
  res: http.ServerResponse,
  keep: boolean,
): Promise<void> {
  const body = await refusal.text();
  const headers: Record<string, string> = {};
  refusal.headers.forEach((value, name) => (headers[name] = value));
  if (!keep) {
    res.shouldKeepAlive = false;
    headers.connection = "close";
  }
  res.writeHead(refusal.status, { ...headers, "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}
