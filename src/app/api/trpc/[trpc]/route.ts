import { parsePreferWait } from "@once/idempotency/http";
import { serverApp } from "@/server/app";
import { handleTrpcRequest, readTrpcRequest } from "@/server/api/handler";

// First the doors that need no place (cross-site posts; the body, read whole under its byte limit
// and a deadline: src/server/api/handler.ts), so a client still sending its body, however slowly,
// holds no place among the requests in flight. Then, past the instance's bound of requests in
// flight, 503 store_busy before any work, unless the request said it would wait (`Prefer: wait`,
// capped as the engine caps it): then it queues for a place (src/server/http/admission.ts). Then
// tRPC itself.
async function handler(req: Request) {
  const app = serverApp();
  const read = await readTrpcRequest(req, app);
  if (read instanceof Response) return read;
  const waitSeconds = parsePreferWait(read.headers.get("prefer")) ?? 0;
  const waitMs = Math.min(waitSeconds * 1000, app.engine.config.maxWaitMs);
  return app.admission.admit((whileWaiting) => handleTrpcRequest(read, app, { whileWaiting }), {
    waitMs,
  });
}

export { handler as GET, handler as POST };
