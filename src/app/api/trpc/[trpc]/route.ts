import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "@/server/api/root";
import { createContext } from "@/server/api/context";
import { boundRequestBody, TRPC_BODY_LIMIT_BYTES, trpcPayloadTooLarge } from "@/server/http/body-limit";
import { logger } from "@/server/logger";

async function handler(req: Request) {
  // Bodies over the limit are 413 before they are read whole (src/server/http/body-limit.ts).
  const bounded = await boundRequestBody(req, TRPC_BODY_LIMIT_BYTES);
  if (!bounded.ok) return trpcPayloadTooLarge(bounded.limitBytes);
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req: bounded.request,
    router: appRouter,
    createContext,
    onError({ error, path }) {
      if (error.code === "INTERNAL_SERVER_ERROR") logger.error({ err: error.cause ?? error, path }, "tRPC handler failed");
    },
  });
}

export { handler as GET, handler as POST };
