// `npm run bench:queues`: the payment outbox against two PostgreSQL job queues, pg-boss and
// graphile-worker, delivering the same charges in the same run. Each round places `--orders`
// orders through the real checkout for each contender (in turn, the order rotating each round),
// then times how long the contender takes to charge them all at the provider service (over HTTP,
// a process of its own) and mark each order paid:
// - the outbox: today's worker (src/payments/outbox-worker.ts) claiming its own rows;
// - pg-boss and graphile-worker: the same rows handed to the library's queue in one transaction
//   (as checkout would enqueue inside the order's); pg-boss takes them in batches of 20 as the
//   outbox does (charges, then the batch's orders paid in one transaction), graphile-worker (no
//   batches in 0.16) one job at a time, each paying its order in a transaction of its own.
// Every contender calls the provider 5 at a time, as the outbox worker does. Figures are charges a
// second, and each library's ratio to the outbox measured in the same round.
import { Logger, run as runGraphile, type Runner } from "graphile-worker";
import PgBoss from "pg-boss";
import pg from "pg";
import {
  createOutboxWorker,
  DEFAULT_OUTBOX_CONFIG,
  mapBounded,
  applyPaymentOutcome,
  paymentPayload,
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
const RUNS = numberFlag("runs", 3);
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
}

async function pgBossQueue(shop: Shop): Promise<Queue> {
  const boss = new PgBoss({ connectionString: shop.url, schedule: false, supervise: false });
  boss.on("error", (error) => console.error("[pg-boss]", error));
  await boss.start();
  await boss.createQueue("charge");
  let latch = countdown(0);
  // A batch as the outbox worker takes one: its charges 5 at a time, then its orders paid in one
  // transaction. pg-boss's worker sleeps out its polling interval (0.5 s at least) after every
  // batch, which caps one worker at 40 jobs a second; a full batch says more may be waiting, so it
  // wakes the worker at once, as the outbox's loop goes on while its rounds are full.
  const worker: string = await boss.work<Job>(
    "charge",
    { batchSize: BATCH, pollingIntervalSeconds: 0.5 },
    async (jobs) => {
      await record(shop, await mapBounded(jobs, CALLS, (job) => charge(shop, job.data)));
      for (const _ of jobs) latch.tick();
      if (jobs.length === BATCH) boss.notifyWorker(worker);
    },
  );
  return {
    name: "pg-boss 10",
    async enqueue(client, jobs) {
      const db = { executeSql: (text: string, values: unknown[]) => client.query(text, values) };
      for (const job of jobs) await boss.send("charge", job, { db });
    },
    setLatch: (next) => (latch = next),
    stop: () => boss.stop({ graceful: true, wait: true }),
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
  queues.push(await pgBossQueue(shop), await graphileQueue(shop));
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
} finally {
  await Promise.allSettled(queues.map((queue) => queue.stop()));
  await enqueuer.end();
  await shop.stop();
}
