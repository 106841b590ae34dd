// `npm run bench:reconcile -- [orders]` (default 1 000 000): one full reconciliation pass
// (`npm run reconcile -- --all`: run after run under the default budget, each from where the last
// stopped) over a shop holding that many paid orders and a provider holding their charges, spread
// over the past 30 days. Both are written in bulk (generate_series), the provider's books behind
// the real provider service, read through its list API with the shop's secret key. Prints the
// pass's time, its runs and pages, and the process's memory (RSS) before and at its peak, next to
// the floor measured in the same run: the same list paged through and dropped, judging nothing.
// `npm run bench:reconcile -- 10000` is the quick check.
import { randomBytes } from "node:crypto";
import { createDb } from "../../src/server/db/client";
import {
  eachChargePage,
  RunBudget,
  DEFAULT_RECONCILE_BUDGET,
  createProviderClient,
  createReconciliation,
} from "../../src/payments";
import { makeTempDataDir, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { startProviderService } from "../../tools/provider-service";
import pg from "pg";

const ORDERS = Number(process.argv[2] ?? 1_000_000);
if (!Number.isInteger(ORDERS) || ORDERS < 1) {
  console.error("usage: npm run bench:reconcile -- [orders, default 1000000]");
  process.exit(2);
}
const MiB = 1024 * 1024;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

/** Peak RSS while `work` runs, sampled every 50 ms (and at its end). */
async function measured<T>(work: () => Promise<T>) {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  const started = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, ms: performance.now() - started, before, peak };
  } finally {
    clearInterval(sample);
  }
}

const server = await startEmbeddedPostgres({
  dataDir: await makeTempDataDir("once-bench-reconcile-"),
  persistent: false,
});
try {
  await server.createDatabase("shop");
  await server.createDatabase("provider");
  await setupDatabase(server.url("shop"), () => {}, { demo: true });
  const secretKey = `sk_bench_${randomBytes(24).toString("hex")}`;
  const provider = await startProviderService({
    databaseUrl: server.url("provider"),
    secretKey,
    log: () => {},
  });
  try {
    const shop = new pg.Client({ connectionString: server.url("shop") });
    const books = new pg.Client({ connectionString: server.url("provider") });
    await Promise.all([shop.connect(), books.connect()]);
    const populating = performance.now();
    // The i-th order and its charge share md5('order-' || i) as the order's id and the charge's
    // reference; one second apart at most, over the past 30 days.
    await shop.query(
      `INSERT INTO "Order" ("id", "tenantId", "userId", "status", "totalCents", "currency", "idempotencyKey", "intentKey", "chargeId", "createdAt", "updatedAt")
       SELECT md5('order-' || i)::uuid, 'acme', (SELECT "id" FROM "User" WHERE "tenantId" = 'acme' LIMIT 1), 'PAID', 1900, 'EUR',
              'bench-' || i, 'bench-' || i, 'ch_bench_' || i, t, t + interval '2 seconds'
       FROM generate_series(1, $1::int) AS i,
            LATERAL (SELECT now() - interval '30 days' + (interval '30 days' - interval '1 hour') * i / $1 AS t) AS at`,
      [ORDERS],
    );
    await books.query(
      `INSERT INTO charges (id, shop_id, idempotency_key, reference, amount_cents, currency, status, created_at)
       SELECT 'ch_bench_' || i, 'once', 'acme:bench-' || i, md5('order-' || i)::uuid::text, 1900, 'EUR', 'SUCCEEDED', t + interval '1 second'
       FROM generate_series(1, $1::int) AS i,
            LATERAL (SELECT now() - interval '30 days' + (interval '30 days' - interval '1 hour') * i / $1 AS t) AS at`,
      [ORDERS],
    );
    await Promise.all([shop.query("ANALYZE"), books.query("ANALYZE")]);
    await Promise.all([shop.end(), books.end()]);
    console.log(
      `populated ${ORDERS} paid orders and ${ORDERS} charges in ${((performance.now() - populating) / 1000).toFixed(1)} s`,
    );

    const client = createProviderClient(provider.url, secretKey);
    // The floor: the provider's whole list paged through and dropped, under the same budget's
    // page and byte caps.
    const floor = await measured(async () => {
      const budget = new RunBudget({ ...DEFAULT_RECONCILE_BUDGET, maxPages: Infinity });
      let charges = 0;
      await eachChargePage(client, { createdLt: Math.ceil(Date.now() / 1000) }, budget, (page) => {
        charges += page.length;
      });
      return { charges, pages: budget.pages };
    });

    const db = createDb(server.url("shop"));
    const reconciliation = createReconciliation(db, client, { settleSeconds: 0 });
    // `npm run reconcile -- --all`, as scripts/reconcile.ts runs it.
    const pass = await measured(async () => {
      let resume: Date | undefined;
      const totals = { runs: 0, pages: 0, charges: 0, findings: 0, unjudged: 0 };
      for (;;) {
        const run = await reconciliation.runSince(undefined, resume);
        totals.runs += 1;
        totals.pages += run.budget.pages;
        totals.charges += run.charges;
        totals.findings += run.findings.length;
        totals.unjudged += run.unjudgedOrders;
        if (!run.continueFrom || (resume && run.continueFrom <= resume)) return totals;
        resume = run.continueFrom;
      }
    });
    await db.$disconnect();

    const { runs, pages, charges, findings, unjudged } = pass.result;
    console.log(`\n| ${ORDERS} orders and charges | time | RSS before → peak |\n|---|---:|---:|`);
    console.log(
      `| floor: the list paged through, nothing judged (${floor.result.pages} pages, ${floor.result.charges} charges) | ${(floor.ms / 1000).toFixed(1)} s | ${mib(floor.before)} → ${mib(floor.peak)} |`,
    );
    console.log(
      `| \`reconcile --all\`: ${runs} run(s), ${pages} pages, ${charges} charges judged, ${findings} finding(s), ${unjudged} unjudged | ${(pass.ms / 1000).toFixed(1)} s (${(pass.ms / floor.ms).toFixed(2)} × the floor) | ${mib(pass.before)} → ${mib(pass.peak)} |`,
    );
    if (findings > 0 || unjudged > 0) process.exitCode = 1;
  } finally {
    await provider.stop();
  }
} finally {
  await server.stop();
}
