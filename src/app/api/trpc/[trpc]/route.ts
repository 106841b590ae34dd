import { serverApp } from "@/server/app";
import { refuseCrossSiteMutation } from "@/server/api/cross-site-guard";
import { handleTrpcRequest } from "@/server/api/handler";
import { boundRequestBody, TRPC_BODY_LIMIT_BYTES, trpcPayloadTooLarge } from "@/server/http/body-limit";
import { Admission } from "@/server/http/admission";

let admission: Admission | undefined;

/** Past the instance's bound of requests in flight, 503 store_busy before any work (admission.ts). */
function handler(req: Request) {
  admission ??= new Admission(serverApp().config.http.maxInFlight);
  return admission.admit(() => serve(req));
}

async function serve(req: Request) {
  // A cross-site post riding on the session cookie is refused before tRPC sees it.
  const refused = refuseCrossSiteMutation(req);
  if (refused) return refused;
  // Bodies over the limit are 413 before they are read whole (src/server/http/body-limit.ts).
  const bounded = await boundRequestBody(req, TRPC_BODY_LIMIT_BYTES);
  if (!bounded.ok) return trpcPayloadTooLarge(bounded.limitBytes);
  return handleTrpcRequest(bounded.request, serverApp());
}

export { handler as GET, handler as POST };
