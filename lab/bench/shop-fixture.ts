// The shop as the payment benches need it: its own embedded PostgreSQL (the shop's database and
// the provider's, each its own), the provider service in a process of its own, the server app on
// a counting pool, and a checkout that places an order through the real tRPC handler.
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import pg from "pg";
import { appRouter } from "../../src/server/api/root";
import { createContextFor } from "../../src/server/api/context";
import { createServerApp } from "../../src/server/app";
import { loadConfig } from "../../src/server/config";
import { createDb } from "../../src/server/db/client";
import { DEMO_PROVIDER_SECRET_KEY, createProviderClient } from "../../src/payments";
import { makeTempDataDir, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { startProviderService } from "../../tools/provider-service";
import { CountingPool } from "./harness";

export type Shop = Awaited<ReturnType<typeof startShop>>;

/** Starts everything; `stop()` ends it all. `connections`: the shop pool's size. */
export async function startShop(connections: number) {
  const server = await startEmbeddedPostgres({
    dataDir: await makeTempDataDir("once-bench-pay-"),
    persistent: false,
  });
  await server.createDatabase("bench");
  const url = server.url("bench");
  await setupDatabase(url, () => {}, { demo: true });
  const pool = new CountingPool({ connectionString: url, max: connections, idleTimeoutMillis: 0 });
  pool.on("error", () => {});
  const db = createDb(url, { pool });
  await server.createDatabase("provider");
  const provider = await startProviderService({
    databaseUrl: server.url("provider"),
    secretKey: DEMO_PROVIDER_SECRET_KEY,
  });
  const books = new pg.Client({ connectionString: server.url("provider") });
  await books.connect();
  const app = createServerApp(loadConfig({ DEMO_MODE: "1" }), { db });
  await db.$executeRaw`UPDATE "Product" SET "stock" = 1000000`;
  const products = (
    await db.product.findMany({ where: { currency: "EUR" }, select: { id: true }, take: 3 })
  ).map((p) => p.id);

  /** One checkout of the first three products, under a new key, through the tRPC handler. */
  const placeOrder = async () => {
    const res = await fetchRequestHandler({
      endpoint: "/api/trpc",
      req: new Request("http://localhost/api/trpc/checkout.placeOrder", {
        method: "POST",
        headers: {
          authorization: "Bearer acme_demo_token",
          "idempotency-key": randomUUID(),
          "content-type": "application/json",
        },
        body: JSON.stringify({
          items: products.map((productId, i) => ({ productId, quantity: i + 1 })),
        }),
      }),
      router: appRouter,
      createContext: (opts) =>
        createContextFor(app, opts.req.headers, opts.resHeaders, opts.info.calls.length),
    });
    await res.text();
    if (res.status !== 200) throw new Error(`placeOrder answered ${res.status}`);
  };

  return {
    url,
    pool,
    db,
    app,
    books,
    products,
    placeOrder,
    provider: createProviderClient(provider.url, app.payments.settings.providerSecretKey),
    async stop() {
      await Promise.allSettled([db.$disconnect(), books.end(), provider.stop()]);
      await pool.end();
      await server.stop();
    },
  };
}
