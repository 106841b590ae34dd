import { createContext } from "@/server/api/context";
import { handleTrpcRequest } from "@/server/api/handler";

function handler(req: Request) {
  return handleTrpcRequest(req, createContext);
}

export { handler as GET, handler as POST };
