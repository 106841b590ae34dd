import { serverApp } from "@/server/app";
import { serveTrpc } from "@/server/api/handler";

// Past the instance's bound of requests in flight, 503 store_busy before any work
// (src/server/http/admission.ts); then the doors (cross-site posts, body size) and tRPC itself
// (src/server/api/handler.ts).
function handler(req: Request) {
  const app = serverApp();
  return app.admission.admit((whileWaiting) => serveTrpc(req, app, { whileWaiting }));
}

export { handler as GET, handler as POST };
