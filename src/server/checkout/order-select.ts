// What an order looks like to its tenant: what checkout returns (and the engine stores and
// replays for a day), and what the orders queries answer. Whitelisted columns only.
import type { Prisma } from "../../generated/prisma/client";

export const orderSelect = {
  id: true,
  status: true,
  totalCents: true,
  currency: true,
  chargeId: true,
  createdAt: true,
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
