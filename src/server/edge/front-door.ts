// The HTTP server in front of Next.js (Next.js's documented custom server: scripts/front-door.ts
// makes it and hands Next.js's request handler to it). It owns what Next.js's own server leaves to
// chance:
//
// - Timeouts a slow client cannot stretch: its headers within HEADERS_TIMEOUT_MS, its whole request
//   within REQUEST_TIMEOUT_MS, checked every second (Node's defaults: 60 s and 300 s, checked every
//   30 s). On the direct path (below) an API body is read here, before anything else of the
//   request is built, and given up on after 10 s (node-body.ts, body-limit.ts's deadline): a
//   slow body holds no place.
// - The peer's address, from the socket, in `x-once-peer-address` (replacing anything a client
//   sent under that name): Next.js hands a route a Request without its socket
//   (src/http/client-address.ts).
// - A refusal where it is cheap: an API request that the instance's admission would refuse now
//   (src/server/edge/admission.ts: the queue full, or no place expected within its patience) is
//   answered `503 store_busy` here, with its Retry-After, before Next.js routes it, parses its URL
//   or reads its body (the connection kept when the body is small: see keepsConnection). The
//   route's own admission decides again for what passes.
// - The API without Next.js's per-request machinery (`npm start`): `/api/trpc/*` and the payment
//   webhook go straight to the app's handlers (ServerApp.routes, src/server/edge/api-routes.ts),
//   the same ones the Next.js route files wrap, with the headers next.config.js gives every
//   answer. Next.js's routing, its request wrapping and its response pipeline cost 1.3–1.7 ms a
//   request (`npm run bench:http`, the route costs), several times what a catalog read's own work
//   costs. Everything else (pages, the other routes, any other method) is Next.js's. Under
//   `npm run dev` every request goes to Next.js, so an edit to a router is what the next request
//   runs.
// - In demo mode only, a lab module's tRPC procedures beside the app's (`direct.lab`:
//   scripts/lib/lab-routes.ts, ONCE_LAB_ROUTES): the benches' control, the checkout without the
//   engine, lives in lab/ and never in the app's build. Served through the app's own tRPC edge
//   (src/server/edge/api-routes.ts's trpcRouteFor).
import http from "node:http";
import { toRequest, writeResponse } from "@once/idempotency/http";
import { busy } from "./admission";
import { PEER_ADDRESS_HEADER } from "../../http/client-address";
import { capConnectionsPerPeer, TOO_MANY_CONNECTIONS } from "./peer-connections";
import {
  BODY_READ_DEADLINE_MS,
  TRPC_BODY_LIMIT_BYTES,
  WEBHOOK_BODY_LIMIT_BYTES,
  type TimedBody,
} from "../../http/body-limit";
import { holdBody } from "./node-body";
import { closeAfterLingering } from "./lingering-close";
import { Lanes, laneOf, type LaneLimits, type LaneName } from "./lanes";
import { serveInLane, type LaneDoor } from "./lane-door";
import { boundOpenConnections, type OpenConnectionLimits } from "./open-connections";

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
  admission: {
    /** The refusal's Retry-After, counted, if a request with this wait would be refused now. */
    refusedNow(waitMs?: number): number | undefined;
    /** API requests in progress or waiting, or one answered lately. */
    activeWithin(withinMs: number): boolean;
  };
  engine: { config: { maxWaitMs: number } };
  /** The cap on connections per peer address (peer-connections.ts), and its refusal counter. */
  config?: { http?: { maxConnectionsPerPeer?: number } };
  refusals?: { count(reason: string, stage: "connection" | "lane" | "body"): void };
  /** Duplicates of a request in flight, waiting outside the line (src/server/edge/waiters.ts). */
  waiters?: {
    joinable(
      method: string | undefined,
      url: string,
      header: (name: string) => string | undefined,
    ): boolean;
  };
  /** The API routes' handlers (src/server/edge/api-routes.ts). */
  routes?: Partial<Record<DirectRoute, DirectHandler>>;
}

/**
 * A direct route's handler: the request, and its body as the door read it (node-body.ts), which
 * the request carries when it is whole (src/server/edge/api-routes.ts's ApiRoutes).
 */
export type DirectHandler = (req: Request, read?: TimedBody) => Promise<Response>;

/** The most a direct route takes (each route judges the body again by its own limit). */
const DIRECT_BODY_LIMIT_BYTES = Math.max(TRPC_BODY_LIMIT_BYTES, WEBHOOK_BODY_LIMIT_BYTES);

/**
 * tRPC procedures a lab module adds beside the app's (scripts/lib/lab-routes.ts, demo mode only).
 */
export interface LabRoutes {
  /** Their paths, as in `/api/trpc/<path>` (a batch of several calls is the app's, as before). */
  readonly procedures: readonly string[];
  /** Their handler, given the running app (the composition root, src/server/app.ts). */
  handlerFor(app: DoorApp): DirectHandler;
}

/** The routes the door serves itself, and the Next.js routes that wrap the same handlers. */
export type DirectRoute = "trpc" | "webhook" | "health";

const TRPC_PREFIX = "/api/trpc/";
/** src/payments/webhook.ts's WEBHOOK_PATH (the door loads nothing of the app). */
const WEBHOOK_PATH = "/api/webhooks/payments";
/** src/app/api/health/route.ts's path: answered from memory, Next.js's work would be most of it. */
const HEALTH_PATH = "/api/health";

/**
 * The route a request goes to straight, or undefined for Next.js: `/api/trpc/<one segment>` by GET
 * or POST (the methods the route exports), the webhook by POST. Any other shape (a trailing slash,
 * another method) gets Next.js's own answer, as before.
 */
export function directRouteOf(method: string | undefined, url: string): DirectRoute | undefined {
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  if (
    path.startsWith(TRPC_PREFIX) &&
    path.length > TRPC_PREFIX.length &&
    !path.includes("/", TRPC_PREFIX.length)
  )
    return method === "GET" || method === "POST" ? "trpc" : undefined;
  if (path === HEALTH_PATH) return method === "GET" ? "health" : undefined;
  return path === WEBHOOK_PATH && method === "POST" ? "webhook" : undefined;
}

export interface FrontDoorOptions {
  /** Next.js's request handler (`app.getRequestHandler()`). */
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  /** The app once it exists (instrumentation makes it at start-up); undefined until then. */
  app: () => DoorApp | undefined;
  /** `Prefer: wait` in seconds, as the engine reads it. */
  parsePreferWait: (header: string | null | undefined) => number | undefined;
  /**
   * Serve the API routes straight from the socket (`npm start`), with `headers` on every answer
   * (next.config.js's, which Next.js adds to every answer it writes); the port is the one
   * Next.js would report in `x-forwarded-port`. Absent (`npm run dev`): Next.js serves them.
   * `lab`: a lab module's procedures, served beside the app's (demo mode only: the door's script
   * checks).
   */
  direct?: { headers: Readonly<Record<string, string>>; port: number; lab?: LabRoutes };
  /** Other bounds for some lanes (tests); lanes.ts's LANE_LIMITS otherwise. */
  lanes?: Partial<Record<LaneName, LaneLimits>>;
  /** Another cap on open connections, or idle time (tests); open-connections.ts's otherwise. */
  connections?: Pick<OpenConnectionLimits, "max" | "idleMs">;
}

export function createFrontDoor(options: FrontDoorOptions): http.Server {
  // The lab module's handler for each app it was made with (one app per process, but in tests).
  const labHandlers = new WeakMap<DoorApp, DirectHandler>();
  const door = laneDoorOf(options);
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
      const url = req.url ?? "/";
      if (url.startsWith(TRPC_PREFIX) && refusedAtTheDoor(req, res, options)) return;
      const route = options.direct && directRouteOf(req.method, url);
      const handler = route ? handlerOf(route, url, options, labHandlers) : undefined;
      // The webhook and health in their own lanes; the API's lane is the app's admission.
      const laned: DirectHandler | undefined =
        handler && route && route !== "trpc"
          ? (request, read) => door.lanes.admit(route, () => handler(request, read), request.signal)
          : handler;
      const served =
        laned && options.direct
          ? serveDirect(laned, req, res, options.direct, () => options.handle(req, res))
          : serveInLane(door, laneOf(url), req, res);
      served.catch((error: unknown) => {
        console.error(`[once] request failed: ${(error as Error).message}`);
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    },
  );
  boundConnections(server, options);
  return server;
}

/**
 * How long after its last answer the API still counts as having work, for the lanes (lanes.ts):
 * under a crowd of pages the API's next request often waits in its socket for the event loop the
 * pages hold, so the API looked idle exactly while it was starved, and the crowd was let run.
 */
export const API_ACTIVE_WITHIN_MS = 1_000;

/**
 * The lanes every route but the API passes, and what they need of the door. Under `npm run dev` a
 * page's first request compiles it for seconds: its lane would refuse the requests behind it. The
 * lanes guard a production server (`direct`); the body limits hold in both.
 */
function laneDoorOf(options: FrontDoorOptions): LaneDoor {
  const lanes = new Lanes({
    onRefuse: (lane) => options.app()?.refusals?.count(`${lane}_busy`, "lane"),
    limits: options.lanes,
    bounded: options.direct !== undefined,
    apiBusy: () => options.app()?.admission.activeWithin(API_ACTIVE_WITHIN_MS) ?? false,
  });
  return {
    lanes,
    handle: options.handle,
    headers: options.direct?.headers ?? {},
    onBodyRefused: (reason) => options.app()?.refusals?.count(reason, "body"),
  };
}

/** The instance's cap on open connections and idle time, and the cap per peer address. */
function boundConnections(server: http.Server, options: FrontDoorOptions): void {
  boundOpenConnections(server, {
    ...options.connections,
    onRefuse: (reason) => options.app()?.refusals?.count(reason, "connection"),
  });
  capConnectionsPerPeer(server, {
    max: () => options.app()?.config?.http?.maxConnectionsPerPeer ?? 0,
    onRefuse: () => options.app()?.refusals?.count(TOO_MANY_CONNECTIONS, "connection"),
  });
}

/** The handler for a direct route: a lab procedure's, or the app's own; none before the app exists. */
function handlerOf(
  route: DirectRoute,
  url: string,
  options: FrontDoorOptions,
  labHandlers: WeakMap<DoorApp, DirectHandler>,
): DirectHandler | undefined {
  const app = options.app();
  if (!app) return undefined;
  const lab = options.direct?.lab;
  if (route === "trpc" && lab?.procedures.includes(procedureOf(url))) {
    let handler = labHandlers.get(app);
    if (!handler) labHandlers.set(app, (handler = lab.handlerFor(app)));
    return handler;
  }
  return app.routes?.[route];
}

/** `checkout.placeOrder` of `/api/trpc/checkout.placeOrder?…` (a direct tRPC path: one segment). */
function procedureOf(url: string): string {
  const query = url.indexOf("?");
  return url.slice(TRPC_PREFIX.length, query < 0 ? url.length : query);
}

/**
 * The `x-forwarded-*` headers Next.js's server fills in when a client sent none (its base server,
 * for every request): the handlers' doors read them the same way whoever served the request.
 */
function fillForwardedHeaders(req: http.IncomingMessage, port: number): void {
  const headers = req.headers;
  headers["x-forwarded-host"] ??= headers.host;
  headers["x-forwarded-port"] ??= String(port);
  headers["x-forwarded-proto"] ??= "http";
  headers["x-forwarded-for"] ??= req.socket.remoteAddress;
}

/** A request answered by the app's handler, Next.js left out. */
async function serveDirect(
  handler: DirectHandler,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  direct: NonNullable<FrontDoorOptions["direct"]>,
  next: () => Promise<void>,
): Promise<void> {
  fillForwardedHeaders(req, direct.port);
  const origin = `http://${req.headers.host ?? `localhost:${direct.port}`}`;
  // Not a URL (a Host header no URL can hold): Next.js's answer to it, as before, its body unread.
  if (!URL.canParse(`${origin}${req.url ?? "/"}`)) return next();
  // The body first, under the routes' limit and deadline, so that a socket still sending one holds
  // no more than its listeners and a timer: no Request, no place among the requests in flight.
  // The route judges what was read by its own limit and answers a refusal in its own shape.
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const read = hasBody
    ? await holdBody(req, DIRECT_BODY_LIMIT_BYTES, BODY_READ_DEADLINE_MS)
    : undefined;
  if (hasBody && !read) {
    // The client left before its body was in: no one to answer, nothing done.
    res.destroy();
    return;
  }
  // Handed on to the request too, as Node would have delivered it: unread, dropped with the answer.
  if (read?.ok) read.release();
  const body = read?.ok ? read.bytes : undefined;
  const request = toRequest(req, { origin, res, ...(body ? { body } : {}) });
  const response = await handler(request, read);
  // A body refused before it was in is not read to its end to keep the connection: the connection
  // goes with the answer, once the rest of the body has been read and dropped (lingering-close.ts).
  if (read?.ok === false) closeAfterLingering(req, res);
  await writeResponse(response, res, { headers: direct.headers, close: read?.ok === false });
}

/** True when the request was answered here (refused), without Next.js. */
function refusedAtTheDoor(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  options: FrontDoorOptions,
): boolean {
  const app = options.app();
  // Not made yet: the route decides alone. A duplicate of a request in flight here may wait on it
  // without a place: the route decides, with its body.
  if (!app) return false;
  if (app.waiters?.joinable(req.method, req.url ?? "/", (name) => headerOf(req, name)))
    return false;
  const prefer = req.headers.prefer;
  const preferred =
    prefer === undefined
      ? 0
      : (options.parsePreferWait(Array.isArray(prefer) ? prefer.join(", ") : prefer) ?? 0);
  const waitMs = Math.min(preferred * 1000, app.engine.config.maxWaitMs);
  const keep = keepsConnection(req);
  const seconds = app.admission.refusedNow(waitMs);
  if (seconds === undefined) return false;
  // The refusal's bytes, kept by Retry-After: a refusal is then a few header writes, not a
  // Response made and read back (which cost more than the socket's own work).
  const written = writtenRefusals.get(seconds);
  if (written) writeRefusal(written, req, res, keep);
  else void keepRefusal(seconds, busy(seconds)).then((made) => writeRefusal(made, req, res, keep));
  return true;
}

/** A request header as one string (Node gives a few as arrays). */
function headerOf(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** A refusal as written on the socket: its status, headers and body bytes. */
interface WrittenRefusal {
  status: number;
  headers: Record<string, string | number>;
  body: Buffer;
}

/** Refusals by Retry-After (seconds: a handful of values in practice; bounded all the same). */
const writtenRefusals = new Map<number, WrittenRefusal>();
const MAX_KEPT_REFUSALS = 64;

/** `refusal` read into its bytes, kept under `seconds`. */
async function keepRefusal(seconds: number, refusal: Response): Promise<WrittenRefusal> {
  const body = Buffer.from(await refusal.arrayBuffer());
  const headers: Record<string, string | number> = {};
  refusal.headers.forEach((value, name) => (headers[name] = value));
  headers["content-length"] = body.byteLength;
  const written = { status: refusal.status, headers, body };
  if (writtenRefusals.size >= MAX_KEPT_REFUSALS) writtenRefusals.clear();
  writtenRefusals.set(seconds, written);
  return written;
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

/** Writes a refusal on the socket; `keep`: the connection stays open after it. */
function writeRefusal(
  refusal: WrittenRefusal,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  keep: boolean,
): void {
  if (keep) res.writeHead(refusal.status, refusal.headers);
  else {
    closeAfterLingering(req, res);
    res.writeHead(refusal.status, { ...refusal.headers, connection: "close" });
  }
  res.end(refusal.body);
}
