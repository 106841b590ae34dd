import { createContext } from "@/server/api/context";
import { refuseCrossSiteMutation } from "@/server/api/cross-site-guard";
import { handleTrpcRequest } from "@/server/api/handler";

function handler(req: Request) {
  // A cross-site post riding on the session cookie is refused before tRPC sees it.
  const refused = refuseCrossSiteMutation(req);
  if (refused) return refused;
  return handleTrpcRequest(req, createContext);
}

export { handler as GET, handler as POST };
