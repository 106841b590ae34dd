// The engine's conformance kit, run against the shop's own checkout.placeOrder through the real
// tRPC handler: every protocol rule, checked black-box on the procedure customers use. This file
// starts its own PostgreSQL so the fail-closed check can really stop it.
import { runConformance, trpcSender } from "@once/idempotency/conformance";
import { afterAll, beforeAll } from "vitest";
import { handleTrpcRequest } from "../api/handler";
import { createDb, type Db } from "../db/client";
import { makeTempDataDir, startEmbeddedPostgres, type EmbeddedServer } from "../../../tools/db/embedded";
import { setupDatabase } from "../../../tools/db/setup";
import { testApp } from "../../test/app";

let server: EmbeddedServer;
let dataDir: string;
let db: Db;
let productId: string;
let url: string;

beforeAll(async () => {
  dataDir = await makeTempDataDir("once-conformance-");
  server = await startEmbeddedPostgres({ dataDir, persistent: true });
  await server.createDatabase("once");
  url = server.url("once");
  await setupDatabase(url, () => {}, { demo: true });
  db = createDb(url, { max: 8 });
  // Enough stock that no check runs out: each creates an order.
  const product = await db.product.create({ data: { sku: "CONF-001", name: "Conformance widget", description: "-", priceCents: 100, stock: 1_000_000 } });
  productId = product.id;
}, 60_000);

afterAll(async () => {
  await db?.$disconnect();
  await server?.stop();
});

const sendOverHttp = trpcSender({
  url: "http://localhost/api/trpc/checkout.placeOrder",
  callers: [{ authorization: "Bearer acme_demo_token" }, { authorization: "Bearer globex_demo_token" }],
  fetch: (req) => handleTrpcRequest(req, testApp(db)),
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
  effects: (key, caller = 0) => db.order.count({ where: { tenantId: caller === 0 ? "acme" : "globex", idempotencyKey: key } }),
  scopes: ["acme", "globex"],
  get databaseUrl() {
    return url;
  },
  failingInput: () => ({ items: [{ productId: "00000000-0000-4000-8000-000000000000", quantity: 1 }] }),
  slowHeaders: { "x-demo-delay-ms": "2500" },
  stopStore: () => server.stop(),
  startStore: async () => {
    server = await startEmbeddedPostgres({ dataDir, port: server.port, persistent: true });
  },
});
