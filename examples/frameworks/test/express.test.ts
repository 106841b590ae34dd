// The express app (examples/frameworks/src/express/app.ts), its existing POST /orders handler
// protected by the adapter: the checks every adapter app passes (test/adapter-app.ts), and the
// draft's vectors through it.
import { checkAdapterApp } from "./adapter-app";

checkAdapterApp({
  app: "express",
  url: () => process.env.EXPRESS_URL!,
  stoppableUrl: () => process.env.EXPRESS_STOPPABLE_URL!,
});
