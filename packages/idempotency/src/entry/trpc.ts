// @once/idempotency/trpc: the tRPC 11 middleware and the fetch adapter's HTTP access. A subpath of
// its own so the main entry loads in an app without @trpc/server (an optional peer).
export {
  createIdempotencyMiddleware,
  type IdempotencyMiddlewareOptions,
  type IdempotentContext,
  toTRPCError,
} from "../trpc/middleware.js";
export { fetchHttpAccess, type HttpAccess } from "../trpc/http.js";
export type { HeaderNames, HeaderNamesOption } from "../header-names.js";
