// The express app (examples/frameworks/src/express/app.ts), its existing POST /orders handler
// protected by the adapter: the checks every adapter app passes (test/adapter-app.ts), and the
// draft's vectors through it; and its POST /tx-orders, a handler writing through the key's
// transaction (test/adapter-tx.ts).
import { inject } from "vitest";
import { checkAdapterApp } from "./adapter-app";
import { checkTransactionRoute } from "./adapter-tx";

checkAdapterApp({
  app: "express",
  url: () => inject("serverApps").urls.express!,
  stoppableUrl: () => inject("serverApps").stoppable!.urls.express!,
  unreadBodyRefusedBy: "adapter",
});
checkTransactionRoute({ app: "express", url: () => inject("serverApps").urls.express! });
