// Placing an order: what the checkout router uses.
export { placeOrder, type PlaceOrderCommand, type PlacedOrder } from "./place-order";
export { placeOrderInput, mergeLines, type PlaceOrderInput, type OrderLine } from "./input";
export { checkoutError, CheckoutRefusal, type CheckoutReason } from "./errors";
export { demoDelayMs, DEMO_DELAY_HEADER, MAX_DEMO_DELAY_MS } from "./demo-delay";
