// Placing an order: what the checkout router uses.
export { placeOrder } from "./place-order";
export { placeOrderInput } from "./input";
export { demoDelayMs } from "./demo-delay";
