// `npm run bench:queues`: the payment outbox against two PostgreSQL job queues, pg-boss and
// graphile-worker, delivering the same charges in the same run. Each round places `--orders`
// orders through the real checkout for each contender (in turn, the order rotating each round),
// then times how long the contender takes to charge them all at the provider service (over HTTP,
// a process of its own) and mark each order paid:
// - the outbox: today's worker (src/payments/outbox-worker.ts) claiming its own rows;
// - pg-boss and graphile-worker: the same rows handed to the library's queue in one transaction
//   (as checkout would enqueue inside the order's). pg-boss is driven as the outbox drives its
//   rows: a loop of `fetch` (batches of 20) → charges → the batch's jobs completed and its orders
//   paid in one statement, woken by a NOTIFY from the enqueuing transaction; with one fetcher,
//   and with two sharing the call lanes. graphile-worker (no batches in 0.16) runs one job at a
//   time, each paying its order in a transaction of its own.
// Every contender calls the provider 5 at a time, as the outbox worker does. Figures are charges a
// second, each library's ratio to the outbox measured in the same round, and where a pg-boss
// batch's time goes.
import { Logger, run as runGraphile, type Runner } from "graphile-worker";
import PgBoss from "pg-boss";
import pg from "pg";
import { Prisma } from "../../src/generated/prisma/client";
import {
  createOutboxWorker,
  DEFAULT_OUTBOX_CONFIG,
  applyPaymentOutcome,
  movesForward,
  orderById,
  paymentPayload,
  takesOrderTotal,
} from "../../src/payments";
import { numberFlag } from "./flags";
import { startShop, type Shop } from "./shop-fixture";
import { percentile } from "../../tools/stats";

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

const ORDERS = numberFlag("orders", 300);
const RUNS = numberFlag("runs", 5);
const { batchSize: BATCH, concurrency: CALLS } = DEFAULT_OUTBOX_CONFIG;

interface Job {
  idempotencyKey: string;
  payload: unknown;
}

/** Charges one row under its provider key, as the outbox worker does. */
async function charge(shop: Shop, job: Job) {
  const { orderId, amountCents, currency } = paymentPayload.parse(job.payload);
  const taken = await shop.provider.charge({
    idempotencyKey: job.idempotencyKey,
    reference: orderId,
    amountCents,
    currency,
  });
  return { orderId, charge: taken };
}

/** Pays the charged orders in one transaction (a batch's, or one job's). */
async function record(shop: Shop, charged: readonly Awaited<ReturnType<typeof charge>>[]) {
  await shop.db.$transaction(async (tx) => {
    for (const { orderId, charge: taken } of charged)
      await applyPaymentOutcome(tx, orderId, "PAID", taken);
  });
}

/** At most `limit` of the calls run at once, whoever makes them: the fetchers share the lanes. */
function limiter(limit: number) {
  let free = limit;
  const waiting: (() => void)[] = [];
  return async <R>(fn: () => Promise<R>): Promise<R> => {
    if (free > 0) free--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else free++;
    }
  };
}

/** A latch that opens after `count` deliveries. */
function countdown(count: number) {
  let left = count;
  let open!: () => void;
  const done = new Promise<void>((resolve) => (open = resolve));
  return { done, tick: () => --left === 0 && open() };
}

/** A job queue as the bench drives it: enqueue inside a transaction, then wait for its workers. */
interface Queue {
  name: string;
  enqueue(client: pg.PoolClient, jobs: readonly Job[]): Promise<void>;
  setLatch(latch: ReturnType<typeof countdown>): void;
  stop(): Promise<void>;
  /** Where a batch's time went, for the queues that time it: milliseconds by step, and batches. */
  spent?: Record<"fetch" | "calls" | "record" | "batches", number>;
}

/**
 * Completes a batch's jobs and pays their orders in one statement, as the outbox records a batch:
 * the job leaves `active` in the same commit as its order moves, fenced by the attempt that
 * fetched it (pg-boss counts a job's attempts in `retry_count`), so a job that expired and was
 * handed on meanwhile is left to the worker that holds it now, as the outbox's attempt fence does.
 */
async function completeAndRecord(
  shop: Shop,
  queue: string,
  jobs: readonly PgBoss.JobWithMetadata<Job>[],
  charged: readonly Awaited<ReturnType<typeof charge>>[],
) {
  const outcome = charged.map((c) => (c.charge.status === "SUCCEEDED" ? "PAID" : "PAYMENT_FAILED"));
  await shop.db.$queryRaw`
    WITH d AS (
      SELECT * FROM unnest(${jobs.map((job) => job.id)}::uuid[], ${jobs.map((job) => job.retryCount)}::int[],
                           ${charged.map((c) => c.orderId)}::text[],
                           ${charged.map((c) => c.charge.id)}::text[], ${outcome}::text[],
                           ${charged.map((c) => c.charge.amountCents)}::int[], ${charged.map((c) => c.charge.currency)}::text[])
        AS d("id", "attempt", "orderId", "chargeId", "outcome", "amountCents", "currency")
    ), done AS (
      UPDATE pgboss.job AS j SET "state" = 'completed', "completed_on" = now(),
             "output" = jsonb_build_object('chargeId', d."chargeId")
      FROM d WHERE j."name" = ${queue} AND j."id" = d."id" AND j."state" = 'active'
        AND j."retry_count" = d."attempt"
      RETURNING d.*
    ), moved AS (
      UPDATE "Order" AS o
      SET "status" = k."outcome"::"OrderStatus", "chargeId" = COALESCE(o."chargeId", k."chargeId"), "updatedAt" = now()
      FROM done AS k
      WHERE ${orderById(Prisma.sql`k."orderId"`)} AND ${movesForward(Prisma.sql`k."outcome"`)}
        AND ${takesOrderTotal(Prisma.sql`k."amountCents"`, Prisma.sql`k."currency"`)}
    )
    SELECT count(*) FROM done`;
}

/**
 * The idle fetchers' wait: every one wakes on a NOTIFY on `channel`; one sent between a fetcher's
 * empty fetch (after `reset`) and its wait is not lost; a half-second poll is the fallback.
 */
async function listen(url: string, channel: string) {
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  await listener.query(`LISTEN "${channel}"`);
  let notified = false;
  const idlers = new Set<() => void>();
  const wake = () => idlers.forEach((done) => done());
  listener.on("notification", () => ((notified = true), wake()));
  return {
    reset: () => (notified = false),
    wake,
    idle: () =>
      new Promise<void>((resolve) => {
        if (notified) return resolve();
        const done = () => (clearTimeout(timer), idlers.delete(done), resolve());
        const timer = setTimeout(done, 500);
        idlers.add(done);
      }),
    end: () => listener.end(),
  };
}

/**
 * pg-boss driven as the outbox drives its rows: a loop of `fetch` (pg-boss's own claim: SKIP
 * LOCKED, retries, expiry) → charges 5 at a time → the jobs completed and their orders paid in one
 * statement. Idle, it waits for a NOTIFY sent in the enqueuing transaction (or a poll), so a
 * committed order is fetched at once rather than after a polling interval.
 */
async function pgBossLoopQueue(shop: Shop, fetchers: number): Promise<Queue> {
  const QUEUE = `charge-loop-${fetchers}`;
  const calls = limiter(CALLS);
  const boss = new PgBoss({ connectionString: shop.url, schedule: false, supervise: false });
  boss.on("error", (error) => console.error("[pg-boss]", error));
  await boss.start();
  await boss.createQueue(QUEUE);
  const wakeUp = await listen(shop.url, QUEUE);
  let latch = countdown(0);
  let running = true;
  const spent = { fetch: 0, calls: 0, record: 0, batches: 0 };
  const fetcher = async () => {
    while (running) {
      wakeUp.reset();
      const fetching = performance.now();
      const jobs = await boss.fetch<Job>(QUEUE, { batchSize: BATCH, includeMetadata: true });
      if (jobs.length === 0) {
        await wakeUp.idle();
        continue;
      }
      const calling = performance.now();
      const charged = await Promise.all(jobs.map((job) => calls(() => charge(shop, job.data))));
      const recording = performance.now();
      await completeAndRecord(shop, QUEUE, jobs, charged);
      spent.fetch += calling - fetching;
      spent.calls += recording - calling;
      spent.record += performance.now() - recording;
      spent.batches++;
      for (const _ of jobs) latch.tick();
    }
  };
  const loop = Promise.all(Array.from({ length: fetchers }, fetcher));
  return {
    name: `pg-boss 10, ${fetchers} fetcher${fetchers > 1 ? "s" : ""}`,
    spent,
    async enqueue(client, jobs) {
      const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
      await boss.insert(
        jobs.map((data) => ({ name: QUEUE, data })),
        { db },
      );
      await client.query(`SELECT pg_notify($1, '')`, [QUEUE]);
    },
    setLatch: (next) => (latch = next),
    async stop() {
      running = false;
      wakeUp.wake();
      await loop;
      await wakeUp.end();
      await boss.stop({ graceful: true, wait: true });
    },
  };
}

async function graphileQueue(shop: Shop): Promise<Queue> {
  let latch = countdown(0);
  const runner: Runner = await runGraphile({
    connectionString: shop.url,
    concurrency: CALLS,
    noHandleSignals: true,
    pollInterval: 500,
    logger: new Logger(() => () => {}), // a line per job would be most of the bench's output
    taskList: {
      charge: async (job) => {
        await record(shop, [await charge(shop, job as Job)]);
        latch.tick();
      },
    },
  });
  return {
    name: "graphile-worker 0.16",
    async enqueue(client, jobs) {
      for (const job of jobs)
        await client.query(`SELECT graphile_worker.add_job('charge', $1::json)`, [job]);
    },
    setLatch: (next) => (latch = next),
    stop: () => runner.stop(),
  };
}

/** Places the round's orders; their outbox rows are PENDING. */
async function placeOrders(shop: Shop) {
  for (let i = 0; i < ORDERS / 10; i++)
    await Promise.all(Array.from({ length: 10 }, shop.placeOrder));
}

/** The outbox: its worker drains its own rows. Charges a second. */
async function timeOutbox(shop: Shop): Promise<number> {
  await placeOrders(shop);
  const worker = createOutboxWorker(shop.db, { provider: shop.provider });
  const started = performance.now();
  // Until a round finds nothing to claim, as the outbox's loop idles (a row that fails is not
  // waited for: it is counted out).
  let delivered = 0;
  for (let round = await worker.runOnce(); round.claimed > 0; round = await worker.runOnce())
    delivered += round.delivered;
  return (delivered / (performance.now() - started)) * 1000;
}

/** A library: the round's rows move to its queue in one transaction, then its workers drain them. */
async function timeQueue(shop: Shop, queue: Queue, enqueuer: pg.Pool): Promise<number> {
  await placeOrders(shop);
  const client = await enqueuer.connect();
  await client.query("BEGIN");
  const { rows } = await client.query<Job>(
    `UPDATE "OutboxMessage" SET "status" = 'DELIVERED' WHERE "status" = 'PENDING'
     RETURNING "idempotencyKey", "payload"`,
  );
  await queue.enqueue(client, rows);
  const latch = countdown(rows.length);
  queue.setLatch(latch);
  await client.query("COMMIT");
  const started = performance.now();
  await latch.done;
  client.release();
  return (rows.length / (performance.now() - started)) * 1000;
}

const shop = await startShop(20);
const enqueuer = new pg.Pool({ connectionString: shop.url, max: 1 });
const queues: Queue[] = [];
try {
  queues.push(
    await pgBossLoopQueue(shop, 1),
    await pgBossLoopQueue(shop, 2),
    await graphileQueue(shop),
  );
  const contenders = [
    { name: "outbox (today)", time: () => timeOutbox(shop) },
    ...queues.map((queue) => ({ name: queue.name, time: () => timeQueue(shop, queue, enqueuer) })),
  ];
  const rates = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  const ratios = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
  for (let round = 0; round < RUNS; round++) {
    const measured = new Map<string, number>();
    for (let i = 0; i < contenders.length; i++) {
      const contender = contenders[(i + round) % contenders.length]!;
      measured.set(contender.name, await contender.time());
    }
    const control = measured.get(contenders[0]!.name)!;
    for (const [name, rate] of measured) {
      rates.get(name)!.push(rate);
      ratios.get(name)!.push(rate / control);
    }
  }
  console.log(`${ORDERS} charges a round, ${RUNS} rounds, provider calls ${CALLS} at a time\n`);
  console.log("| delivery | charges/s (median) | to the outbox, same round (median, range) |");
  console.log("|---|---:|---|");
  for (const { name } of contenders) {
    const r = ratios.get(name)!;
    console.log(
      `| ${name} | ${median(rates.get(name)!).toFixed(0)} | ${median(r).toFixed(2)}x (${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}x) |`,
    );
  }
  console.log("\nWhere a batch's time goes (milliseconds a batch, mean over every round):\n");
  console.log("| delivery | batches | fetch | provider calls | complete and pay |");
  console.log("|---|---:|---:|---:|---:|");
  for (const { name, spent } of queues) {
    if (!spent?.batches) continue;
    const each = (ms: number) => (ms / spent.batches).toFixed(0);
    console.log(
      `| ${name} | ${spent.batches} | ${each(spent.fetch)} | ${each(spent.calls)} | ${each(spent.record)} |`,
    );
  }
} finally {
  await Promise.allSettled(queues.map((queue) => queue.stop()));
  await enqueuer.end();
  await shop.stop();
}
