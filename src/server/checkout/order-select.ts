// What an order looks like to its tenant: what checkout returns (and the engine stores and
// replays for a day), and what the orders queries answer. Whitelisted columns only.
import type { Prisma } from "../../generated/prisma/client";

/** The order's own columns, without its lines (writeOrder's statement returns the same, in this order). */
export const orderColumnsSelect = {
  id: true,
  status: true,
  totalCents: true,
  currency: true,
  chargeId: true,
  createdAt: true,
} satisfies Prisma.OrderSelect;

/** An order as checkout answers it: its columns and its lines. */
export type PlacedOrder = Prisma.OrderGetPayload<{ select: typeof orderSelect }>;

export const orderSelect = {
  ...orderColumnsSelect,
  items: {
    select: {
      productId: true,
      sku: true,
      name: true,
      unitPriceCents: true,
      quantity: true,
      lineTotalCents: true,
    },
    orderBy: { sku: "asc" },
  },
} satisfies Prisma.OrderSelect;
