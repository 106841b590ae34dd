// The API routes' handlers, one implementation for both ways a request reaches them: the front door
// calls them straight from the socket (src/server/edge/front-door.ts, `npm start`), and the
// Next.js route files are thin wrappers around them (src/app/api/trpc/[trpc]/route.ts,
// src/app/api/webhooks/payments/route.ts: `next dev`, and any request the door hands to Next.js).
// The app carries them (ServerApp.routes), so the door runs the very copy of this code that the
// app's instrumentation built, not one of its own.
import { parsePreferWait } from "@once/idempotency/http";
import type { AnyRouter } from "@trpc/server";
import type { AppConfig } from "../config";
import { handleTrpcRequest, readTrpcRequest, type TrpcApp } from "../api/handler";
import { appRouter } from "../api/root";
import { healthAnswer, type HealthMonitor } from "../health";
import { webhookResponse, type WebhookDeps } from "@/payments";
import type { Admission } from "./admission";
import type { TimedBody } from "../../http/body-limit";
import type { Waiters } from "./waiters";

/**
 * What a server's app answers API requests with: a Fetch `Request` in, a `Response` out. `read`:
 * the body as the front door read it from the socket (src/server/edge/node-body.ts), which the
 * request then carries; absent (Next.js's route files), the route reads the request's own body.
 */
export interface ApiRoutes {
  /** `/api/trpc/*` (GET and POST). */
  trpc(req: Request, read?: TimedBody): Promise<Response>;
  /** `POST /api/webhooks/payments`, the payment provider's events. */
  webhook(req: Request, read?: TimedBody): Promise<Response>;
  /** `GET /api/health`, from the process's last probe (src/server/health.ts). */
  health(req: Request): Promise<Response>;
}

/** The parts of the server app the tRPC route uses. */
export type TrpcRouteApp = TrpcApp & { config: AppConfig; admission: Admission; waiters: Waiters };

/** The parts of the server app the routes use. */
export type RoutesApp = TrpcRouteApp & { payments: WebhookDeps; health: HealthMonitor };

export function apiRoutesFor(app: RoutesApp): ApiRoutes {
  return {
    trpc: trpcRouteFor(app, appRouter),
    webhook: (req, read) =>
      webhookResponse(app.payments, req, { secret: app.config.payments.webhookSecret }, read),
    health: () => healthAnswer(app.health, app.admission),
  };
}

// First the doors that need no place (cross-site posts; the body, read whole under its byte limit
// and a deadline: src/server/api/handler.ts), so a client still sending its body, however slowly,
// holds no place among the requests in flight. Then, past the instance's bound of requests in
// flight, a place in the line for up to the store's wait, whatever the request's `Prefer: wait`
// (which is patience for its key in flight, not for the line), or 503 store_busy before any work
// (src/server/edge/admission.ts). Then tRPC itself. `router`: the app's; a lab module the front door serves in demo mode
// (scripts/lib/lab-routes.ts) passes its own and gets every one of these doors, the app's places
// among the requests in flight included.
export function trpcRouteFor(
  app: TrpcRouteApp,
  router: AnyRouter,
): (req: Request, read?: TimedBody) => Promise<Response> {
  return async (req, read) => {
    const whole = await readTrpcRequest(req, app, read);
    if (whole instanceof Response) return whole;
    const waitSeconds = parsePreferWait(whole.headers.get("prefer")) ?? 0;
    const waitMs = Math.min(waitSeconds * 1000, app.engine.config.maxWaitMs);
    // The signal of the request as it came (it fires when its client leaves): a client gone while
    // its request queued is not served. A duplicate of a request in flight here waits on it
    // instead, outside the line (src/server/edge/waiters.ts).
    const body = async () =>
      read?.ok ? read.bytes : new Uint8Array(await whole.clone().arrayBuffer());
    return app.waiters.serve(whole, body, waitMs, {
      throughLine: (request, { caller }) =>
        app.admission.admit(
          (whileWaiting) => handleTrpcRequest(request, app, { whileWaiting, caller }, router),
          { waitMs, signal: req.signal },
        ),
      fromMemory: (request, { caller }) => handleTrpcRequest(request, app, { caller }, router),
    });
  };
}
