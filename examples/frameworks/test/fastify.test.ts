// The fastify app (examples/frameworks/src/fastify/app.ts), its existing POST /orders handler
// protected by the adapter: the checks every adapter app passes (test/adapter-app.ts), and the
// draft's vectors through it; and its POST /tx-orders, a handler writing through the key's
// transaction (test/adapter-tx.ts).
import { inject } from "vitest";
import { checkAdapterApp } from "./adapter-app";
import { checkTransactionRoute } from "./adapter-tx";

checkAdapterApp({
  app: "fastify",
  url: () => inject("serverApps").urls.fastify!,
  stoppableUrl: () => inject("serverApps").stoppable!.urls.fastify!,
  unreadBodyRefusedBy: "framework",
});
checkTransactionRoute({ app: "fastify", url: () => inject("serverApps").urls.fastify! });
