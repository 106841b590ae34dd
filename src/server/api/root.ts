import { createCallerFactory, createTRPCRouter } from "./trpc";
import { adminRouter } from "./routers/admin";
import { catalogRouter } from "./routers/catalog";
import { checkoutRouter } from "./routers/checkout";
import { ordersRouter } from "./routers/orders";
import { sessionRouter } from "./routers/session";

export const appRouter = createTRPCRouter({
  catalog: catalogRouter,
  checkout: checkoutRouter,
  orders: ordersRouter,
  session: sessionRouter,
  admin: adminRouter,
});

export type AppRouter = typeof appRouter;
export const createCaller = createCallerFactory(appRouter);
