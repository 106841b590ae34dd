// checkout.placeOrder: the order, its stock and its payment's outbox row, written in the
// idempotency key's transaction (src/server/checkout). Refusals become stored, replayed 4xx.
import { Header, parseIdempotencyKey } from "@/server/idempotency";
import { CheckoutError, demoDelayMs, placeOrder, placeOrderInput } from "../../checkout";
import type { Context } from "../context";
import { createTRPCRouter, idempotentProcedure, ReasonedError } from "../trpc";

/**
 * The checkout key (parsed): the order's intent. The middleware has already refused a missing or
 * malformed key. One place to change when the middleware hands it over as `ctx.idempotencyKey`.
 */
function checkoutKeyOf(ctx: Pick<Context, "headers">): string {
  const parsed = parseIdempotencyKey(ctx.headers.get(Header.KEY));
  if (!parsed.ok) throw new ReasonedError("BAD_REQUEST", parsed.reason, parsed.message);
  return parsed.key;
}

export const checkoutRouter = createTRPCRouter({
  placeOrder: idempotentProcedure(placeOrderInput).mutation(async ({ ctx, input }) => {
    const idempotencyKey = checkoutKeyOf(ctx);
    try {
      const order = await placeOrder(ctx.tx, {
        tenantId: ctx.tenantId,
        userId: ctx.principal.userId,
        idempotencyKey,
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
