// The HTTP server in front of Next.js (its documented custom server, made by scripts/front-door.ts).
// It owns what Next.js's own server leaves to chance:
//
// - Timeouts a slow client cannot stretch (Node's defaults: 60 s and 300 s, checked every 30 s);
//   a direct API body is held here under its own deadline (node-body.ts), holding no place.
// - The peer's address in `x-once-peer-address`, replacing a client's (src/http/client-address.ts).
// - A refusal where it is cheap: an API request the admission would refuse now is answered
//   `503 store_busy` before Next.js routes it or its body is read; the route decides again for
//   what passes.
// - The API without Next.js (`npm start`): `/api/trpc/*`, the webhook and health go straight to the
//   app's handlers (api-routes.ts) with next.config.js's headers; Next.js's routing and response
//   pipeline cost 1.3-1.7 ms a request (`npm run bench:http`). Everything else, and everything
//   under `npm run dev`, is Next.js's. In demo mode a lab module's procedures are served the same
//   way (`direct.lab`, scripts/lib/lab-routes.ts).
import http from "node:http";
import { toRequest, writeResponse } from "@once/idempotency/http";
import { busy, type Admission } from "./admission";
import type { Waiters } from "./waiters";
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

/** How long a client may take to send its headers, and its whole request: seconds to spare. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 30_000;
/** How often Node looks for connections past those timeouts (its default, 30 s, triples them). */
export const CONNECTIONS_CHECK_MS = 1_000;

/** What the front door needs of the app (the composition root, src/server/app.ts). */
export interface DoorApp {
  admission: Pick<Admission, "refusedNow" | "activeWithin">;
  engine: { config: { maxWaitMs: number } };
  config?: { http?: { maxConnectionsPerPeer?: number } };
  refusals?: { count(reason: string, stage: "connection" | "lane" | "body"): void };
  waiters?: Pick<Waiters, "joinable">;
  routes?: Partial<Record<DirectRoute, DirectHandler>>;
}

/** A direct route's handler: the request, and its body as the door held it (node-body.ts). */
export type DirectHandler = (req: Request, read?: TimedBody) => Promise<Response>;

/** The most a direct route takes (each route judges the body again by its own limit). */
const DIRECT_BODY_LIMIT_BYTES = Math.max(TRPC_BODY_LIMIT_BYTES, WEBHOOK_BODY_LIMIT_BYTES);

/** tRPC procedures a lab module adds beside the app's (demo mode only). */
export interface LabRoutes {
  /** Their paths, as in `/api/trpc/<path>` (a batch is the app's). */
  readonly procedures: readonly string[];
  handlerFor(app: DoorApp): DirectHandler;
}

export type DirectRoute = "trpc" | "webhook" | "health";

const TRPC_PREFIX = "/api/trpc/";
/** src/payments/webhook.ts's WEBHOOK_PATH (the door loads nothing of the app). */
const WEBHOOK_PATH = "/api/webhooks/payments";
/** src/app/api/health/route.ts's path. */
const HEALTH_PATH = "/api/health";

/**
 * The route served straight: `/api/trpc/<one segment>` by GET or POST, the webhook by POST, health
 * by GET; anything else is Next.js's.
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
  /** The app once instrumentation has made it. */
  app: () => DoorApp | undefined;
  /** `Prefer: wait` in seconds, as the engine reads it. */
  parsePreferWait: (header: string | null | undefined) => number | undefined;
  /** Serve the API straight (`npm start`), with next.config.js's `headers`; absent: Next.js does. */
  direct?: { headers: Readonly<Record<string, string>>; port: number; lab?: LabRoutes };
  /** Other bounds (tests). */
  lanes?: Partial<Record<LaneName, LaneLimits>>;
  connections?: Pick<OpenConnectionLimits, "max" | "idleMs">;
}

export function createFrontDoor(options: FrontDoorOptions): http.Server {
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
 * How long after its last answer the API still counts as busy for the lanes: under a crowd of pages
 * its next request waits in its socket, so it looked idle exactly while it was starved.
 */
export const API_ACTIVE_WITHIN_MS = 1_000;

/** The lanes, bounded only in production (`direct`): under dev a page's compile would fill one. */
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

/** A direct route's handler: a lab procedure's or the app's; none before the app exists. */
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

/** The `x-forwarded-*` headers Next.js's server fills in when a client sent none. */
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
  // A Host no URL can hold: Next.js's answer, its body unread.
  if (!URL.canParse(`${origin}${req.url ?? "/"}`)) return next();
  // The body first: a socket still sending one holds no Request and no place. The route judges it
  // by its own limit and refuses in its own shape.
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const read = hasBody
    ? await holdBody(req, DIRECT_BODY_LIMIT_BYTES, BODY_READ_DEADLINE_MS)
    : undefined;
  if (hasBody && !read) {
    // The client left before its body was in: no one to answer, nothing done.
    res.destroy();
    return;
  }
  // Handed on to the request too, unread, dropped with the answer.
  if (read?.ok) read.release();
  const body = read?.ok ? read.bytes : undefined;
  const request = toRequest(req, { origin, res, ...(body ? { body } : {}) });
  const response = await handler(request, read);
  // A refused body's connection closes after the answer, once the rest is dropped.
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
  // No app yet, or a duplicate that may wait without a place: the route decides.
  if (!app) return false;
  if (app.waiters?.joinable(req.method, req.url ?? "/", (name) => headerOf(req, name)))
    return false;
  const preferred = options.parsePreferWait(headerOf(req, "prefer")) ?? 0;
  const waitMs = Math.min(preferred * 1000, app.engine.config.maxWaitMs);
  const seconds = app.admission.refusedNow(waitMs);
  if (seconds === undefined) return false;
  // Kept by Retry-After: a Response made and read back costs more than the socket's own work.
  const written = writtenRefusals.get(seconds);
  if (written) writeRefusal(written, req, res);
  else void keepRefusal(seconds, busy(seconds)).then((made) => writeRefusal(made, req, res));
  return true;
}

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

/** Refusals by Retry-After (a handful of values; bounded all the same). */
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
 * A refused request keeps its connection when its body is declared and within an API body's limit
 * (Node drops it): for a crowd that re-sends at once, accepts were most of a refusal's CPU.
 */
function keepsConnection(req: http.IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return false;
  return Number(req.headers["content-length"] ?? 0) <= TRPC_BODY_LIMIT_BYTES;
}

function writeRefusal(
  refusal: WrittenRefusal,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): void {
  if (keepsConnection(req)) res.writeHead(refusal.status, refusal.headers);
  else {
    closeAfterLingering(req, res);
    res.writeHead(refusal.status, { ...refusal.headers, connection: "close" });
  }
  res.end(refusal.body);
}
