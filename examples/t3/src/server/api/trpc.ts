/**
 * YOU PROBABLY DON'T NEED TO EDIT THIS FILE, UNLESS:
 * 1. You want to modify request context (see Part 1).
 * 2. You want to create a new middleware or type of procedure (see Part 3).
 *
 * TL;DR - This is where all the tRPC server stuff is created and plugged in. The pieces you will
 * need to use are documented accordingly near the end.
 */
import { reasonOf } from "@once/idempotency";
import {
  createIdempotencyMiddleware,
  type HttpAccess,
} from "@once/idempotency/trpc";
import { initTRPC, TRPCError } from "@trpc/server";
import superjson from "superjson";
import { ZodError } from "zod";

import { anonymousIdOf } from "~/server/anonymous-id";
import { db } from "~/server/db";
import { engine } from "~/server/idempotency";

/**
 * 1. CONTEXT
 *
 * This section defines the "contexts" that are available in the backend API.
 *
 * These allow you to access things when processing a request, like the database, the session, etc.
 *
 * This helper generates the "internals" for a tRPC context. The API handler and RSC clients each
 * wrap this and provides the required context.
 *
 * @see https://trpc.io/docs/server/context
 */
export const createTRPCContext = async (opts: {
  headers: Headers;
  // The request as the idempotency middleware reads it (route.ts: fetchHttpAccess). Absent for
  // React Server Components' calls (src/trpc/server.ts), which must not call idempotent mutations.
  http?: HttpAccess;
}) => {
  return {
    db,
    ...opts,
  };
};

/**
 * 2. INITIALIZATION
 *
 * This is where the tRPC API is initialized, connecting the context and transformer. We also parse
 * ZodErrors so that you get typesafety on the frontend if your procedure fails due to validation
 * errors on the backend.
 */
const t = initTRPC.context<typeof createTRPCContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    // No stack, even in development: a replayed failure must be the first one, byte for byte.
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      data: {
        ...data,
        zodError:
          error.cause instanceof ZodError ? error.cause.flatten() : null,
        // Why the idempotency engine refused (idempotency_key_reused, request_in_progress, …).
        reason: reasonOf(error),
      },
    };
  },
});

/**
 * Create a server-side caller.
 *
 * @see https://trpc.io/docs/server/server-side-calls
 */
export const createCallerFactory = t.createCallerFactory;

/**
 * 3. ROUTER & PROCEDURE (THE IMPORTANT BIT)
 *
 * These are the pieces you use to build your tRPC API. You should import these a lot in the
 * "/src/server/api/routers" directory.
 */

/**
 * This is how you create new routers and sub-routers in your tRPC API.
 *
 * @see https://trpc.io/docs/router
 */
export const createTRPCRouter = t.router;

/**
 * Middleware for timing procedure execution and adding an artificial delay in development.
 *
 * You can remove this if you don't like it, but it can help catch unwanted waterfalls by simulating
 * network latency that would occur in production but not in local development.
 */
const timingMiddleware = t.middleware(async ({ next, path }) => {
  const start = Date.now();

  if (t._config.isDev) {
    // artificial delay in dev
    const waitMs = Math.floor(Math.random() * 400) + 100;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
  }

  const result = await next();

  const end = Date.now();
  console.log(`[TRPC] ${path} took ${end - start}ms to execute`);

  return result;
});

/**
 * Public (unauthenticated) procedure
 *
 * This is the base piece you use to build new queries and mutations on your tRPC API. It does not
 * guarantee that a user querying is authorized, but you can still access user session data if they
 * are logged in.
 */
export const publicProcedure = t.procedure.use(timingMiddleware);

/**
 * Anonymous procedure
 *
 * This app has no sign-in: the caller is the browser, known by the anonymous id that
 * src/middleware.ts gives it with the first page (src/server/anonymous-id.ts says why).
 */
export const anonymousProcedure = publicProcedure.use(function anonymous({
  ctx,
  next,
}) {
  const anonymousId = anonymousIdOf(ctx.headers);
  if (!anonymousId) {
    throw new TRPCError({
      code: "UNAUTHORIZED",
      message: "No anonymous id: load a page of this app first",
    });
  }
  return next({ ctx: { anonymousId } });
});

/**
 * Idempotency middleware
 *
 * For every mutation that changes state: a retry with the same Idempotency-Key gets the first
 * answer back instead of running again. Use it after `.input()`, so invalid input is refused
 * before a key is taken, and write through `ctx.tx` (not `ctx.db`), so the writes and the key's
 * completion commit together.
 */
export const idempotency = createIdempotencyMiddleware(t, {
  engine,
  // Keys are unique per scope: the browser here. With sign-in: ctx.session.user.id.
  scope: (
    ctx: Awaited<ReturnType<typeof createTRPCContext>> & { anonymousId: string }
  ) => `anonymous:${ctx.anonymousId}`,
  http: (ctx) => ctx.http,
});
