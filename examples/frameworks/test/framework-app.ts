// One framework's example app as its test file checks it: the checks every adapter app passes
// (adapter-app.ts), the draft's vectors through it, and its transaction route (adapter-tx.ts), on
// the URLs the global setup provided (`serverApps`: the app's, and the one on the PostgreSQL the
// 503 checks stop).
import { inject } from "vitest";
import { checkAdapterApp } from "./adapter-app";
import { checkTransactionRoute } from "./adapter-tx";

export function checkFrameworkApp(
  app: "express" | "fastify" | "nestjs",
  unreadBodyRefusedBy: Parameters<typeof checkAdapterApp>[0]["unreadBodyRefusedBy"],
) {
  const url = () => inject("serverApps").urls[app]!;
  const stoppableUrl = () => inject("serverApps").stoppable!.urls[app]!;
  checkAdapterApp({ app, url, stoppableUrl, unreadBodyRefusedBy });
  checkTransactionRoute({ app, url });
}
