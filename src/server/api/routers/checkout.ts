// checkout.placeOrder: see src/server/checkout.
import { createTRPCRouter } from "../trpc";

export const checkoutRouter = createTRPCRouter({});
