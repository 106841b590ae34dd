// The example's whole API: one idempotent mutation, transfers.create, as the package's README
// shows.
import { initTRPC, TRPCError } from "@trpc/server";
import { reasonOf, type IdempotencyEngine } from "@once/idempotency";
import { createIdempotencyMiddleware, type HttpAccess } from "@once/idempotency/trpc";
import { z } from "zod";
import type { Db, Tx } from "./db.js";

export interface Context {
  prisma: Db;
  engine: IdempotencyEngine<Tx>;
  http: HttpAccess;
  /** Lets a test ask for a slow transfer (x-slow-ms): off unless the server was started with it. */
  allowSlowHeader: boolean;
}

/** Bearer tokens → accounts. A real app looks them up; the example keeps two. */
const ACCOUNTS: Record<string, string> = { alice_token: "alice", bob_token: "bob" };

/** A refusal the handler chooses: the engine stores it and replays it to every retry. */
class Refusal extends Error {
  constructor(
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

const t = initTRPC.context<Context>().create({
  errorFormatter({ shape, error }) {
    // The reason on every error, and no stack (a replay must be byte equal).
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, data: { ...data, reason: reasonOf(error) } };
  },
});

const authed = t.procedure.use(function authenticate({ ctx, next }) {
  const token = /^Bearer (\S+)$/.exec(ctx.http.header("authorization") ?? "")?.[1];
  const account = token ? ACCOUNTS[token] : undefined;
  if (!account)
    throw new TRPCError({ code: "UNAUTHORIZED", message: "Send Authorization: Bearer <token>" });
  return next({ ctx: { account } });
});

const idempotency = createIdempotencyMiddleware(t, {
  engine: (ctx) => ctx.engine,
  scope: (ctx: Context & { account: string }) => ctx.account, // from authentication, never from the body
  http: (ctx) => ctx.http,
});

const idempotentProcedure = <T extends z.ZodType>(input: T) => authed.input(input).use(idempotency);

const transferInput = z.object({
  to: z.string().min(1).max(64),
  amountCents: z.number().int().min(1),
});

/** Transfers above this are refused: a deterministic 4xx, stored and replayed. */
const LIMIT_CENTS = 1_000_000;

export const appRouter = t.router({
  transfers: t.router({
    create: idempotentProcedure(transferInput).mutation(async ({ ctx, input }) => {
      if (input.amountCents > LIMIT_CENTS) {
        throw new TRPCError({
          code: "PRECONDITION_FAILED",
          message: "Over the transfer limit",
          cause: new Refusal("over_limit", "Over the transfer limit"),
        });
      }
      const slowMs = ctx.allowSlowHeader ? Number(ctx.http.header("x-slow-ms") ?? 0) : 0;
      if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(slowMs, 10_000)));
      return { transfer: await recordTransfer(ctx.tx, ctx.account, ctx.idempotencyKey, input) };
    }),
  }),
});

export type AppRouter = typeof appRouter;

/**
 * The second line of defence: one transfer per (account, key), whatever happens to the key's
 * record (busted, expired). ON CONFLICT DO NOTHING never fails, so it costs no reconnect.
 */
async function recordTransfer(
  tx: Tx,
  account: string,
  key: string,
  input: z.infer<typeof transferInput>,
) {
  const select = `"id", "account", "toAccount", "amountCents", "createdAt"`;
  const inserted = await tx.$queryRawUnsafe<TransferRow[]>(
    `INSERT INTO "Transfer" ("account", "toAccount", "amountCents", "requestKey") VALUES ($1, $2, $3, $4)
     ON CONFLICT ("account", "requestKey") DO NOTHING RETURNING ${select}`,
    account,
    input.to,
    input.amountCents,
    key,
  );
  const row =
    inserted[0] ??
    (
      await tx.$queryRawUnsafe<TransferRow[]>(
        `SELECT ${select} FROM "Transfer" WHERE "account" = $1 AND "requestKey" = $2`,
        account,
        key,
      )
    )[0]!;
  return { ...row, createdAt: row.createdAt.toISOString() };
}

interface TransferRow {
  id: string;
  account: string;
  toAccount: string;
  amountCents: number;
  createdAt: Date;
}
