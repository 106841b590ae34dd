// The one owner of initTRPC. It exports only what routers may use: the router factory and the
// procedures. A state-changing mutation can only be declared through `idempotentProcedure` (or
// `adminIdempotentProcedure`), so none can forget the idempotency key.
import { initTRPC, TRPCError } from "@trpc/server";
import { z, ZodError } from "zod";
import type { Context } from "./context";
import type { Principal } from "../auth/principal";
import { createIdempotencyMiddleware, Header, StoreUnavailableError, toTRPCError, type Tx } from "../idempotency";
import { engineFor } from "../engine";

// ---------------------------------------------------------------------------------------------
// 1. Initialisation: plain JSON on the wire (no transformer), and every error carries
//    `data.reason` (a stable, machine-readable word) and, for invalid input, the zod issues.

/** An error a handler throws on purpose, with its reason, e.g. out of stock → 412 out_of_stock. */
export class ReasonedError extends TRPCError {
  readonly reason: string;
  constructor(code: TRPCError["code"], reason: string, message: string) {
    super({ code, message });
    this.reason = reason;
  }
}

function reasonOf(error: TRPCError): string | undefined {
  if (error instanceof ReasonedError) return error.reason;
  const cause = error.cause as { reason?: unknown } | undefined;
  if (cause && typeof cause.reason === "string") return cause.reason;
  if (error.cause instanceof ZodError) return "invalid_input";
  if (error.code === "BAD_REQUEST") return error.cause instanceof SyntaxError ? "invalid_json" : "bad_request";
  return undefined;
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    const zodError = error.cause instanceof ZodError ? z.flattenError(error.cause) : undefined;
    const reason = reasonOf(error);
    // Internal errors say nothing about the server's insides to the caller.
    // Invalid input reads as sentences ("✖ Too small: expected array to have >=1 items → at items"),
    // not as the JSON dump of the issues that zod's own message is; the issues are in data.zodError.
    const message =
      error.code === "INTERNAL_SERVER_ERROR"
        ? "Internal server error"
        : error.cause instanceof ZodError
          ? `Invalid input: ${z.prettifyError(error.cause)}`
          : shape.message;
    const { stack: _stack, ...data } = shape.data;
    return {
      ...shape,
      message,
      data: { ...data, ...(reason ? { reason } : {}), ...(zodError ? { zodError } : {}) },
    };
  },
});

export const createTRPCRouter = t.router;
export const createCallerFactory = t.createCallerFactory;

// ---------------------------------------------------------------------------------------------
// 2. Auth middlewares: named functions, so a stack trace says which one refused.

const authed = t.middleware(async function isAuthed({ ctx, next }) {
  const principal = await ctx.getPrincipal().catch((error: unknown) => {
    // Fail closed, as the engine does: no database, no answer but "come back in a second".
    const unavailable = new StoreUnavailableError("The database cannot be reached; nothing was executed", { cause: error, retryAfterSeconds: 1 });
    ctx.resHeaders.set(Header.RETRY_AFTER, String(unavailable.retryAfterSeconds));
    throw toTRPCError(unavailable);
  });
  if (!principal) throw new TRPCError({ code: "UNAUTHORIZED", message: "Sign in, or send Authorization: Bearer <token>" });
  return next({ ctx: { principal } });
});

const tenantOnly = authed.unstable_pipe(async function isTenant({ ctx, next }) {
  const tenantId = ctx.principal.tenantId;
  if (ctx.principal.role !== "TENANT" || !tenantId) {
    throw new TRPCError({ code: "FORBIDDEN", message: "This needs a tenant account" });
  }
  return next({ ctx: { tenantId } });
});

const adminOnly = authed.unstable_pipe(async function isAdmin({ ctx, next }) {
  if (ctx.principal.role !== "ADMIN") throw new TRPCError({ code: "FORBIDDEN", message: "Admins only" });
  return next();
});

// ---------------------------------------------------------------------------------------------
// 3. Procedures.

const runIdempotently = createIdempotencyMiddleware<Context & { principal: Principal }>({
  deps: (ctx) => engineFor(ctx.db).deps(),
  // Keys belong to whoever authenticated: the tenant, or "admin" for operators. Never the body.
  scopeOf: (ctx) => ctx.principal.tenantId ?? "admin",
});

export const publicProcedure = t.procedure;
export const tenantProcedure = t.procedure.use(tenantOnly);
export const adminProcedure = t.procedure.use(adminOnly);

/**
 * The only way to declare a state-changing tenant mutation. The input is validated first, so
 * invalid input is refused before any key is reserved; the handler gets the key's transaction as
 * `ctx.tx` and must write through it, so its writes commit together with the key's completion.
 */
export const idempotentProcedure = <TInput extends z.ZodType>(input: TInput) => tenantProcedure.input(input).use(function idempotency(opts) {
    return runIdempotently({ ...opts, next: (o: { ctx: { tx: Tx } }) => opts.next({ ctx: o.ctx }) });
  });
/** Admin mutations (bust, release, retry) are idempotent too, scoped to "admin". */
export const adminIdempotentProcedure = <TInput extends z.ZodType>(input: TInput) => adminProcedure.input(input).use(function idempotency(opts) {
    return runIdempotently({ ...opts, next: (o: { ctx: { tx: Tx } }) => opts.next({ ctx: o.ctx }) });
  });
