// The fastify app (examples/frameworks/src/fastify/app.ts), its existing POST /orders handler
// protected by the adapter: the checks every adapter app passes (test/adapter-app.ts), and the
// draft's vectors through it.
import { checkAdapterApp } from "./adapter-app";

checkAdapterApp({
  app: "fastify",
  url: () => process.env.FASTIFY_URL!,
  stoppableUrl: () => process.env.FASTIFY_STOPPABLE_URL!,
});
