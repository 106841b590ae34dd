// The nestjs app (examples/frameworks/src/nestjs/app.ts), its existing POST /orders handler
// protected by the adapter: the checks every adapter app passes (test/adapter-app.ts), and the
// draft's vectors through it.
import { checkAdapterApp } from "./adapter-app";

checkAdapterApp({
  app: "nestjs",
  url: () => process.env.NESTJS_URL!,
  stoppableUrl: () => process.env.NESTJS_STOPPABLE_URL!,
});
