// The API routes' handlers, for both ways a request reaches them: the front door calls them from
// the socket (`npm start`), and the Next.js route files wrap them (`next dev`). The app carries
// them, so the door runs the copy the app's instrumentation built.
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

/** `read`: the body as the front door held it; absent (Next.js's routes), the request's own. */
export interface ApiRoutes {
  trpc(req: Request, read?: TimedBody): Promise<Response>;
  webhook(req: Request, read?: TimedBody): Promise<Response>;
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

// First the doors that need no place (cross-site posts, the body under its limit and deadline), so
// a slow body holds no place; then a duplicate waits on its flight (waiters.ts), or a place in the
// line for the store's wait, whatever its `Prefer: wait` (admission.ts); then tRPC. A lab module
// passes its own `router` and gets every one of these doors.
export function trpcRouteFor(
  app: TrpcRouteApp,
  router: AnyRouter,
): (req: Request, read?: TimedBody) => Promise<Response> {
  return async (req, read) => {
    const whole = await readTrpcRequest(req, app, read);
    if (whole instanceof Response) return whole;
    const waitSeconds = parsePreferWait(whole.headers.get("prefer")) ?? 0;
    const waitMs = Math.min(waitSeconds * 1000, app.engine.config.maxWaitMs);
    // The signal of the request as it came: a client gone while queued is not served.
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
