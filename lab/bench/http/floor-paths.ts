// Where the floor server (floor-server.ts) answers what the app's routes do not name.

/** The floor's checkout with its transaction in Prisma's interactive transaction. */
export const PRISMA_FLOOR_PATH = "/floor/prisma/checkout.placeOrder";
