// `npm run bench:payments`: how fast the payment side keeps up with checkout. Places orders through
// the real tRPC handler, drains the outbox through the worker (charging over HTTP at the provider
// service, services/provider, a process of its own with its own database: its cost is not
// counted), and hands the provider's events to the webhook handler, counting the statements each
// sends (round trips) and the time per item.
// Starts its own PostgreSQL. Compare runs by the statement counts (exact) and by time ratios taken
// in the same machine state (absolute times vary with the machine and its load).
import {
  createOutboxWorker,
  handleProviderWebhook,
  type ProviderEventBody,
} from "../../src/payments";
import { numberFlag } from "./flags";
import { startShop } from "./shop-fixture";

const ORDERS = numberFlag("orders", 300);
const CONCURRENCY = 10;

const shop = await startShop(CONCURRENCY);
try {
  const { pool, db, app, books, products, placeOrder } = shop;

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
  const worker = createOutboxWorker(db, { provider: shop.provider });
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
} finally {
  await shop.stop();
}
