// The one owner of initTRPC. It exports only what routers may use: the router factory and the
// procedures. A state-changing mutation can only be declared through `idempotentProcedure` (or
// `adminIdempotentProcedure`), so none can forget the idempotency key.
import { initTRPC } from "@trpc/server";
import { createIdempotencyMiddleware } from "@once/idempotency/trpc";
import { Header } from "@once/idempotency/reasons";
import { z, ZodError } from "zod";
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";
import type { Principal } from "../auth/principal";
import type { Context } from "./context";
import { docsOf, reasonOf, storeUnavailableError, translateError, uncountedStoreRefusal } from "./errors";

// ---------------------------------------------------------------------------------------------
// 1. Initialisation: plain JSON on the wire (no transformer); every error carries `data.reason`,
//    `data.docs` and, for invalid input, the zod issues.

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : undefined;
    const reason = reasonOf(error);
    // Internal errors say nothing about the server's insides to the caller. Invalid input reads
    // as sentences; the issues themselves are in data.zodError.
    const message =
      error.code === "INTERNAL_SERVER_ERROR"
        ? "Internal server error"
        : error.cause instanceof ZodError
          ? `Invalid input: ${z.prettifyError(error.cause)}`
          : shape.message;
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, message, data: { ...data, reason, docs: docsOf(reason), ...(zodError ? { zodError } : {}) } };
  },
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

// ---------------------------------------------------------------------------------------------
// 2. The edge: AppErrors get their status, a lost database is a 503 with Retry-After. Named
//    functions, so a stack trace says which one refused.

const edge = t.middleware(async function translateErrors({ ctx, next }) {
  const result = await next();
  if (result.ok) return result;
  const translated = translateError(result.error);
  if (!translated) return result;
  if (translated.code === "SERVICE_UNAVAILABLE") ctx.resHeaders.set(Header.RETRY_AFTER, "1");
  return { ...result, error: translated };
});

// Outermost: a 503 the engine did not count (a query's, the principal lookup's) is counted here,
// busy apart from unavailable, so the metrics show both. Scope "-": no tenant is known for sure.
const countStoreRefusals = t.middleware(async function countStoreRefusals({ ctx, path, next }) {
  const result = await next();
  const event = result.ok ? null : uncountedStoreRefusal(result.error);
  if (event) ctx.engine.counters.increment("-", path, event);
  return result;
});

const authed = t.middleware(async function isAuthed({ ctx, next }) {
  let principal: Principal | null;
  try {
    principal = await ctx.getPrincipal();
  } catch (error) {
    // Fail closed, as the engine does: no database, no answer but "come back in a second".
    ctx.resHeaders.set(Header.RETRY_AFTER, "1");
    throw storeUnavailableError(error);
  }
  if (!principal) throw new AppError(Reason.UNAUTHORIZED, "Sign in, or send Authorization: Bearer <token>");
  return next({ ctx: { principal } });
});

const tenantOnly = authed.unstable_pipe(async function isTenant({ ctx, next }) {
  const tenantId = ctx.principal.tenantId;
  if (ctx.principal.role !== "TENANT" || !tenantId) throw new AppError(Reason.FORBIDDEN, "This needs a tenant account");
  return next({ ctx: { tenantId } });
});

const adminOnly = authed.unstable_pipe(async function isAdmin({ ctx, next }) {
  if (ctx.principal.role !== "ADMIN") throw new AppError(Reason.FORBIDDEN, "This needs an admin account");
  return next();
});

// ---------------------------------------------------------------------------------------------
// 3. Procedures.

const idempotency = createIdempotencyMiddleware(t, {
  engine: (ctx) => ctx.engine,
  // Keys belong to whoever authenticated: the tenant, or "admin" for operators. Never the body.
  scope: (ctx: Context & { principal: Principal }) => ctx.principal.tenantId ?? "admin",
  http: (ctx) => ({
    header: (name) => ctx.headers.get(name),
    setHeader: (name, value) => ctx.resHeaders.set(name, value),
    batchSize: ctx.batchSize,
  }),
});

export const publicProcedure = t.procedure.use(countStoreRefusals).use(edge);
export const tenantProcedure = publicProcedure.use(tenantOnly);
export const adminProcedure = publicProcedure.use(adminOnly);

/**
 * The only way to declare a state-changing tenant mutation. The input is validated first, so
 * invalid input is refused before any key is reserved; the handler gets the key's transaction as
 * `ctx.tx` (and the key as `ctx.idempotencyKey`) and must write through it, so its writes commit
 * together with the key's completion. The inner `edge` gives a handler's AppError its status
 * before the engine decides whether to store it (4xx) or release the key (5xx).
 */
export const idempotentProcedure = <TInput extends z.ZodType>(input: TInput) => tenantProcedure.input(input).use(idempotency).use(edge);

/** Admin mutations (bust, release, retry) are idempotent too, scoped to "admin". */
export const adminIdempotentProcedure = <TInput extends z.ZodType>(input: TInput) => adminProcedure.input(input).use(idempotency).use(edge);
