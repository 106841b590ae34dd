// The engine's conformance kit, run against the shop's own checkout.placeOrder through the real
// tRPC handler: every protocol rule, checked black-box on the procedure customers use. This file
// starts its own PostgreSQL so the fail-closed check can really stop it.
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import { beforeAll } from "vitest";
import { handleTrpcRequest } from "../api/handler";
import { useOwnPostgres } from "../../test/own-postgres";
import { testApp } from "../../test/app";

const pg = useOwnPostgres({ prefix: "once-conformance-", poolMax: 8 });
let productId: string;

beforeAll(async () => {
  // Enough stock that no check runs out: each creates an order.
  const product = await pg.db.product.create({
    data: {
      sku: "CONF-001",
      name: "Conformance widget",
      description: "-",
      priceCents: 100,
      stock: 1_000_000,
    },
  });
  productId = product.id;
});

const sendOverHttp = trpcSender({
  url: "http://localhost/api/trpc/checkout.placeOrder",
  callers: [
    { authorization: "Bearer acme_demo_token" },
    { authorization: "Bearer globex_demo_token" },
  ],
  fetch: (req) => handleTrpcRequest(req, testApp(pg.db)),
});

let quantity = 0;
runConformance({
  name: "checkout.placeOrder",
  send: (options) => sendOverHttp(options),
  input: () => ({ items: [{ productId, quantity: (quantity++ % 50) + 1 }] }),
  otherInput: (input) => {
    const { items } = input as { items: { productId: string; quantity: number }[] };
    return { items: [{ productId, quantity: items[0]!.quantity + 50 }] };
  },
  effects: (key, caller = 0) =>
    pg.db.order.count({
      where: { tenantId: caller === 0 ? "acme" : "globex", idempotencyKey: key },
    }),
  scopes: ["acme", "globex"],
  get databaseUrl() {
    return pg.url;
  },
  failingInput: () => ({
    items: [{ productId: "00000000-0000-4000-8000-000000000000", quantity: 1 }],
  }),
  slowHeaders: { "x-demo-delay-ms": "2500" },
  stopStore: () => pg.stop(),
  startStore: () => pg.start(),
});
