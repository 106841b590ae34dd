import { parsePreferWait } from "@once/idempotency/http";
import { serverApp } from "@/server/app";
import { serveTrpc } from "@/server/api/handler";

// Past the instance's bound of requests in flight, 503 store_busy before any work, unless the
// request said it would wait (`Prefer: wait`, capped as the engine caps it): then it queues for a
// place (src/server/http/admission.ts). Then the doors (cross-site posts, body size) and tRPC
// itself (src/server/api/handler.ts).
function handler(req: Request) {
  const app = serverApp();
  const waitSeconds = parsePreferWait(req.headers.get("prefer")) ?? 0;
  const waitMs = Math.min(waitSeconds * 1000, app.engine.config.maxWaitMs);
  return app.admission.admit((whileWaiting) => serveTrpc(req, app, { whileWaiting }), { waitMs });
}

export { handler as GET, handler as POST };
