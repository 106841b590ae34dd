// benchControl.placeOrder: the checkout's business transaction with no idempotency engine, the
// control that `npm run bench:http` divides its figures by. It lives here, not in the app: the
// front door serves it beside the app's procedures when the bench starts a demo server with
// ONCE_LAB_ROUTES naming this module (lab/bench/http/cluster.ts, scripts/lib/lab-routes.ts); a
// production server refuses the variable, and the app's build never holds this code.
//
// It must cost exactly what checkout.placeOrder costs minus the engine, so it is made of the
// app's own pieces: the same input schema, the same auth and error edge (tenantProcedure), the
// same route doors and places among the requests in flight (trpcRouteFor, with the running app's
// admission), the same placeOrder in one Prisma interactive transaction with the engine's
// transaction timeout, the same answer. The order still needs a checkout key (it is stored on the
// order and on the payment's outbox row), so the bench sends a fresh Idempotency-Key; here it is
// only parsed, never reserved.
//
// The door loads this module with tsx, so these pieces are a second copy of the app's modules (the
// app's build holds the first); both copies work on the running app's own objects (its Prisma
// client, engine configuration, admission), which the door hands to handlerFor.
import { parseIdempotencyKey } from "@once/idempotency/operator";
import { Header } from "@once/idempotency/reasons";
import { AppError } from "../../../src/shared/app-error";
import { createTRPCRouter, tenantProcedure } from "../../../src/server/api/trpc";
import { demoDelayMs, placeOrder, placeOrderInput } from "../../../src/server/checkout";
import { trpcRouteFor, type TrpcRouteApp } from "../../../src/server/edge/api-routes";
import type { LabRoutes } from "../../../src/server/edge/front-door";
import type { TimedBody } from "../../../src/http/body-limit";
import { CONTROL_PROCEDURE } from "./scenarios";
import { BARE_CATALOG_PATH, BARE_CATALOG_PROCEDURE, bareTrpcRoute } from "./bare-trpc-route";

export const controlRouter = createTRPCRouter({
  benchControl: createTRPCRouter({
    placeOrder: tenantProcedure.input(placeOrderInput).mutation(async ({ ctx, input }) => {
      const parsed = parseIdempotencyKey(ctx.headers.get(Header.KEY));
      if (!parsed.ok) throw new AppError(parsed.reason, parsed.message);
      const timeoutMs = ctx.config.engine.transactionTimeoutMs;
      const order = await ctx.db.$transaction(
        (tx) =>
          placeOrder(tx, {
            tenantId: ctx.tenantId,
            userId: ctx.principal.userId,
            idempotencyKey: parsed.key,
            items: input.items,
            delayMs: demoDelayMs(ctx.headers, ctx.config),
          }),
        { timeout: timeoutMs, maxWait: timeoutMs },
      );
      return { order };
    }),
  }),
});

/** `/api/trpc/benchControl.placeOrder` through the app's tRPC route, on the running app. */
export function controlRoute(
  app: TrpcRouteApp,
): (req: Request, read?: TimedBody) => Promise<Response> {
  return trpcRouteFor(app, controlRouter);
}

/**
 * What the front door serves from this module (scripts/lib/lab-routes.ts): the control, and the
 * least tRPC query (bare-trpc-route.ts) that the route costs judge the catalog read by.
 */
export const labRoutes: LabRoutes = {
  procedures: [CONTROL_PROCEDURE, BARE_CATALOG_PROCEDURE],
  // The door's app is the composition root (src/server/app.ts's ServerApp): a TrpcRouteApp.
  handlerFor: (app) => {
    const control = controlRoute(app as unknown as TrpcRouteApp);
    const bare = bareTrpcRoute(app as unknown as TrpcRouteApp);
    return (req, read) =>
      new URL(req.url).pathname === BARE_CATALOG_PATH ? bare(req) : control(req, read);
  },
};
