// checkout.placeOrder: the order, its stock and its payment's outbox row, written in the
// idempotency key's transaction (src/server/checkout). Refusals become stored, replayed 4xx.
import { Header, parseIdempotencyKey } from "../../idempotency";
import { CheckoutError, demoDelayMs, placeOrder, placeOrderInput } from "../../checkout";
import { createTRPCRouter, idempotentProcedure, ReasonedError } from "../trpc";

export const checkoutRouter = createTRPCRouter({
  placeOrder: idempotentProcedure(placeOrderInput).mutation(async ({ ctx, input }) => {
    // The middleware has already refused a missing or malformed key; this is its parsed form.
    const parsed = parseIdempotencyKey(ctx.headers.get(Header.KEY));
    if (!parsed.ok) throw new ReasonedError("BAD_REQUEST", parsed.reason, parsed.message);
    try {
      const order = await placeOrder(ctx.tx, {
        tenantId: ctx.tenantId,
        userId: ctx.principal.userId,
        idempotencyKey: parsed.key,
        items: input.items,
        delayMs: demoDelayMs(ctx.headers),
      });
      return { order };
    } catch (error) {
      if (error instanceof CheckoutError) throw new ReasonedError(error.code, error.reason, error.message);
      throw error;
    }
  }),
});
