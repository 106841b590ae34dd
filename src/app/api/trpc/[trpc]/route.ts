import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/context";
import { refuseCrossSiteMutation } from "@/server/api/cross-site-guard";
import { logger } from "@/server/logger";

function handler(req: Request) {
  // A cross-site post riding on the session cookie is refused before tRPC sees it.
  const refused = refuseCrossSiteMutation(req);
  if (refused) return refused;
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext,
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}

export { handler as GET, handler as POST };
