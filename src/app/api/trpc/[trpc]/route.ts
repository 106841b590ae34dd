import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { servedRouter } from "@/server/api/root";
import { createContext } from "@/server/api/context";
import { logger } from "@/server/logger";

function handler(req: Request) {
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: servedRouter(),
    createContext,
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}

export { handler as GET, handler as POST };
