// The one owner of initTRPC. It exports only what routers may use: the router factory and the
// procedures. A state-changing mutation can only be declared through `idempotentProcedure` (or
// `adminIdempotentProcedure`), so none can forget the idempotency key.
import { initTRPC } from "@trpc/server";
import { IdempotencyError } from "@once/idempotency";
import { refusalHeaders, retryAfterOf, storeUnavailable } from "@once/idempotency/operator";
import { createIdempotencyMiddleware, toTRPCError } from "@once/idempotency/trpc";
import { Header } from "@once/idempotency/reasons";
import { z } from "zod";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import { keyScopeOf, type Principal } from "../auth/principal";
import type { Context } from "./context";
import { fromAppError, translateError, TRPC_OPTIONS } from "./errors";

// ---------------------------------------------------------------------------------------------
// 1. Initialisation: plain JSON on the wire (no transformer); every error carries `data.reason`,
//    `data.docs` and, for invalid input, the zod issues.

const t = initTRPC.context<Context>().create(TRPC_OPTIONS);

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

// ---------------------------------------------------------------------------------------------
// 2. The edge: AppErrors get their status, a lost database is the engine's 503 with Retry-After.
//    Named functions, so a stack trace says which one refused.

/** Whom a refusal is counted under: the caller's key scope once known, "-" before that. */
function counterScope(ctx: Context): string {
  const principal = ctx.knownPrincipal();
  return principal ? keyScopeOf(principal) : "-";
}

// Outermost. A store failure nobody answered yet (a query's, or one before the engine ran) becomes
// the engine's answer here, counted (busy apart from unavailable); the engine's pass unchanged.
const edge = t.middleware(async function translateErrors({ ctx, path, next }) {
  const result = await next();
  if (result.ok) return result;
  const translated = translateError(result.error, (event) =>
    ctx.engine.counters.increment(counterScope(ctx), path, event),
  );
  if (!translated) return result;
  // The engine's refusal says when to come back; a bounded pool that refused at once says when it
  // will have room (its drain rate); else 1 s.
  if (translated.cause instanceof IdempotencyError)
    for (const [name, value] of refusalHeaders(translated.cause)) ctx.resHeaders.set(name, value);
  else if (translated.code === "SERVICE_UNAVAILABLE")
    ctx.resHeaders.set(Header.RETRY_AFTER, String(retryAfterOf(result.error) ?? 1));
  return { ...result, error: translated };
});

// Inside the idempotency middleware: a handler's AppError gets its status before the engine
// decides whether to store it (4xx) or release the key (5xx); a lost database is the engine's.
const appErrors = t.middleware(async function translateAppErrors({ next }) {
  const result = await next();
  if (result.ok || !(result.error.cause instanceof AppError)) return result;
  return { ...result, error: fromAppError(result.error.cause) };
});

const authed = t.middleware(async function isAuthed({ ctx, path, next }) {
  let principal: Principal | null;
  try {
    principal = await ctx.getPrincipal();
  } catch (error) {
    // Fail closed, as the engine does: no database, no answer but "come back in a second".
    // Counted under "-": whoever is calling, the lookup that would say so failed.
    const refusal = storeUnavailable(error, (event) =>
      ctx.engine.counters.increment("-", path, event),
    );
    for (const [name, value] of refusalHeaders(refusal)) ctx.resHeaders.set(name, value);
    throw toTRPCError(refusal);
  }
  if (!principal)
    throw new AppError(Reason.UNAUTHORIZED, "Sign in, or send Authorization: Bearer <token>");
  return next({ ctx: { principal } });
});

const tenantOnly = authed.unstable_pipe(async function isTenant({ ctx, next }) {
  const tenantId = ctx.principal.tenantId;
  if (ctx.principal.role !== "TENANT" || !tenantId)
    throw new AppError(Reason.FORBIDDEN, "This needs a tenant account");
  return next({ ctx: { tenantId } });
});

const adminOnly = authed.unstable_pipe(async function isAdmin({ ctx, next }) {
  if (ctx.principal.role !== "ADMIN")
    throw new AppError(Reason.FORBIDDEN, "This needs an admin account");
  return next();
});

// ---------------------------------------------------------------------------------------------
// 3. Procedures.

const idempotency = createIdempotencyMiddleware(t, {
  engine: (ctx) => ctx.engine,
  // Keys belong to whoever authenticated: the tenant, or "admin" for operators. Never the body.
  scope: (ctx: Context & { principal: Principal }) => keyScopeOf(ctx.principal),
  http: (ctx) => ({
    header: (name) => ctx.headers.get(name),
    setHeader: (name, value) => ctx.resHeaders.set(name, value),
    batchSize: ctx.batchSize,
    whileWaiting: ctx.whileWaiting,
  }),
});

export const publicProcedure = t.procedure.use(edge);
export const tenantProcedure = publicProcedure.use(tenantOnly);
export const adminProcedure = publicProcedure.use(adminOnly);

/**
 * The only way to declare a state-changing tenant mutation. The input is validated first, so
 * invalid input is refused before any key is reserved; the handler gets the key's transaction as
 * `ctx.tx` (and the key as `ctx.idempotencyKey`) and must write through it, so its writes commit
 * together with the key's completion.
 */
export const idempotentProcedure = <TInput extends z.ZodType>(input: TInput) =>
  tenantProcedure.input(input).use(idempotency).use(appErrors);

/** Admin mutations (bust, release, retry) are idempotent too, scoped to "admin". */
export const adminIdempotentProcedure = <TInput extends z.ZodType>(input: TInput) =>
  adminProcedure.input(input).use(idempotency).use(appErrors);
