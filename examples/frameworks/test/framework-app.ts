// One framework's example app as its test file checks it: the checks every adapter app passes
// (adapter-app.ts), the draft's vectors through it, and its transaction route (adapter-tx.ts), on
// the URLs the global setup gave it (<APP>_URL, and <APP>_STOPPABLE_URL for the one it stops).
import { checkAdapterApp } from "./adapter-app";
import { checkTransactionRoute } from "./adapter-tx";

export function checkFrameworkApp(
  app: "express" | "fastify" | "nestjs",
  unreadBodyRefusedBy: Parameters<typeof checkAdapterApp>[0]["unreadBodyRefusedBy"],
) {
  const env = app.toUpperCase();
  const url = () => process.env[`${env}_URL`]!;
  const stoppableUrl = () => process.env[`${env}_STOPPABLE_URL`]!;
  checkAdapterApp({ app, url, stoppableUrl, unreadBodyRefusedBy });
  checkTransactionRoute({ app, url });
}
