import { createCallerFactory, createTRPCRouter } from "./trpc";
import { benchControlEnabled } from "../env";
import { adminRouter } from "./routers/admin";
import { benchControlRouter } from "./routers/bench-control";
import { catalogRouter } from "./routers/catalog";
import { checkoutRouter } from "./routers/checkout";
import { ordersRouter } from "./routers/orders";
import { sessionRouter } from "./routers/session";

const routers = {
  catalog: catalogRouter,
  checkout: checkoutRouter,
  orders: ordersRouter,
  session: sessionRouter,
  admin: adminRouter,
};
export const appRouter = createTRPCRouter(routers);

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);

let served: typeof appRouter | undefined;
/**
 * The router the HTTP handler serves: the app's, plus `benchControl` (the checkout without the
 * engine, `npm run bench:http`'s control) on a server started with ONCE_BENCH_CONTROL=1. Decided
 * on the first request, from the configuration checked at start-up; AppRouter (what clients see)
 * never has it.
 */
export function servedRouter(): typeof appRouter {
  served ??= benchControlEnabled() ? (createTRPCRouter({ ...routers, benchControl: benchControlRouter }) as unknown as typeof appRouter) : appRouter;
  return served;
}
