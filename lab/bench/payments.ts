// `npm run bench:payments`: how fast the payment side keeps up with checkout. Places orders through
// the real tRPC handler, drains the outbox through the worker (charging over HTTP at the provider
// service, services/provider, a process of its own with its own database: its cost is not
// counted), and hands the provider's events to the webhook handler, counting the statements each
// sends (round trips) and the time per item.
// Starts its own PostgreSQL. Compare runs by the statement counts (exact) and by time ratios taken
// in the same machine state (absolute times vary with the machine and its load).
import { randomUUID } from "node:crypto";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { appRouter } from "../../src/server/api/root";
import { createContextFor } from "../../src/server/api/context";
import { createServerApp } from "../../src/server/app";
import { loadConfig } from "../../src/server/config";
import { createDb } from "../../src/server/db/client";
import { makeTempDataDir, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import pg from "pg";
import { DEMO_PROVIDER_SECRET_KEY } from "../../src/server/payments/config";
import { createOutboxWorker } from "../../src/server/payments/outbox-worker";
import { createProviderClient } from "../../src/server/payments/provider";
import { handleProviderWebhook, type ProviderEventBody } from "../../src/server/payments/webhook";
import { startProviderService } from "../../tools/provider-service";
import { CountingPool } from "./harness";
import { numberFlag } from "./flags";

const ORDERS = numberFlag("orders", 300);
const CONCURRENCY = 10;

const server = await startEmbeddedPostgres({
  dataDir: await makeTempDataDir("once-bench-pay-"),
  persistent: false,
});
try {
  await server.createDatabase("bench");
  const url = server.url("bench");
  await setupDatabase(url, () => {}, { demo: true });
  const pool = new CountingPool({ connectionString: url, max: CONCURRENCY, idleTimeoutMillis: 0 });
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

  /** Runs `work`, returning statements and milliseconds per item. */
  const measure = async (items: number, work: () => Promise<void>) => {
    const before = pool.statements;
    const started = performance.now();
    await work();
    const ms = performance.now() - started;
    return {
      statementsPerItem: (pool.statements - before) / items,
      msPerItem: ms / items,
      perSecond: (items / ms) * 1000,
    };
  };

  for (let i = 0; i < 50; i++) await placeOrder(); // warm-up (its outbox rows are drained below too)
  const rows: [string, Awaited<ReturnType<typeof measure>>][] = [];
  rows.push([
    `placeOrder, ${products.length} lines, sequential`,
    await measure(ORDERS, async () => {
      for (let i = 0; i < ORDERS; i++) await placeOrder();
    }),
  ]);
  rows.push([
    `placeOrder, ${products.length} lines, ${CONCURRENCY} at a time`,
    await measure(ORDERS, async () => {
      for (let i = 0; i < ORDERS / CONCURRENCY; i++)
        await Promise.all(Array.from({ length: CONCURRENCY }, placeOrder));
    }),
  ]);

  const pending = await db.outboxMessage.count({ where: { status: "PENDING" } });
  const worker = createOutboxWorker(db, {
    provider: createProviderClient(provider.url, app.payments.settings.providerSecretKey),
  });
  rows.push([
    `outbox drain (${pending} rows)`,
    await measure(pending, async () => {
      while ((await worker.runOnce()).claimed > 0);
    }),
  ]);

  // The events as the provider posts them (signed; the signature check costs no statement).
  const { rows: events } = await books.query<ProviderEventBody>(
    `SELECT id, type, payload AS data FROM events`,
  );
  rows.push([
    `webhook handling (${events.length} events)`,
    await measure(events.length, async () => {
      for (let i = 0; i < events.length; i += CONCURRENCY) {
        await Promise.all(
          events.slice(i, i + CONCURRENCY).map((body) => handleProviderWebhook(app.payments, body)),
        );
      }
    }),
  ]);

  console.log("| path | statements per item | ms per item | items/s |\n|---|---:|---:|---:|");
  for (const [path, m] of rows)
    console.log(
      `| ${path} | ${m.statementsPerItem.toFixed(2)} | ${m.msPerItem.toFixed(2)} | ${m.perSecond.toFixed(0)} |`,
    );
  await Promise.all([db.$disconnect(), books.end(), provider.stop()]);
  await pool.end();
} finally {
  await server.stop();
}
