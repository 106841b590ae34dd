// benchControl.placeOrder: the checkout's business transaction with no idempotency engine, the
// control that `npm run bench:http` divides every figure by. It exists only on a server started
// with ONCE_BENCH_CONTROL=1 in demo mode (see routerFor in ../root.ts), never in production.
//
// It must cost exactly what checkout.placeOrder costs minus the engine: same input schema, same
// auth and error edge (tenantProcedure), the same placeOrder in one Prisma interactive transaction
// with the engine's transaction timeout, the same answer. The order still needs a checkout key
// (it is stored on the order and on the payment's outbox row), so the bench sends a fresh
// Idempotency-Key; here it is only parsed, never reserved.
import { parseIdempotencyKey } from "@once/idempotency/operator";
import { Header } from "@once/idempotency/reasons";
import { AppError } from "@/shared/app-error";
import { demoDelayMs, placeOrder, placeOrderInput } from "../../checkout";
import { createTRPCRouter, tenantProcedure } from "../trpc";

export const benchControlRouter = createTRPCRouter({
  placeOrder: tenantProcedure.input(placeOrderInput).mutation(async ({ ctx, input }) => {
    const parsed = parseIdempotencyKey(ctx.headers.get(Header.KEY));
    if (!parsed.ok) throw new AppError(parsed.reason, parsed.message);
    const timeoutMs = ctx.config.engine.transactionTimeoutMs;
    const order = await ctx.db.$transaction(
      (tx) =>
        placeOrder(tx, {
          tenantId: ctx.tenantId,
          userId: ctx.principal.userId,
          idempotencyKey: parsed.key,
          items: input.items,
          delayMs: demoDelayMs(ctx.headers, ctx.config),
        }),
      { timeout: timeoutMs, maxWait: timeoutMs },
    );
    return { order };
  }),
});
