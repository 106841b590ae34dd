import { createCallerFactory, createTRPCRouter } from "./trpc";
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

/**
 * The app's router, plus `benchControl` (the checkout without the engine, `npm run bench:http`'s
 * control) when asked. AppRouter, the type clients see, never has it.
 */
export function routerFor(options: { benchControl: boolean }): typeof appRouter {
  return options.benchControl ? benchRouter : appRouter;
}
const benchRouter = createTRPCRouter({
  ...routers,
  benchControl: benchControlRouter,
}) as unknown as typeof appRouter;
