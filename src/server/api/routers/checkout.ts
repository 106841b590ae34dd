// checkout.placeOrder: the order, its stock and its payment's outbox row, written in the
// idempotency key's transaction (src/server/checkout). Refusals (AppError) become stored,
// replayed 4xx answers.
import { demoDelayMs, placeOrder, placeOrderInput } from "../../checkout";
import { createTRPCRouter, idempotentProcedure } from "../trpc";

export const checkoutRouter = createTRPCRouter({
  placeOrder: idempotentProcedure(placeOrderInput).mutation(async ({ ctx, input }) => {
    const order = await placeOrder(ctx.tx, {
      tenantId: ctx.tenantId,
      userId: ctx.principal.userId,
      idempotencyKey: ctx.idempotencyKey,
      items: input.items,
      delayMs: demoDelayMs(ctx.headers, ctx.config),
    });
    return { order };
  }),
});
