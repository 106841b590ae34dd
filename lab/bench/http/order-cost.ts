// What one paid order costs, end to end: protected new-key checkouts at a fixed number of
// connections, then the wait until every payment they wrote is charged and its webhook handled;
// the CPU time of the server, the payment worker and PostgreSQL (read from /proc) over the whole
// of it, divided by the orders written. With pg_stat_statements loaded (the bench's database
// loads it) also the statements, and so the round trips, each order costs, grouped by statement.
import type pg from "pg";
import { cpuMsOf } from "./cpu";
import { figuresOf, runSlice, type Target } from "./load";
import { settle } from "./pace";

export interface OrderCost {
  orders: number;
  wallSeconds: number;
  serverMs: number;
  workerMs: number;
  dbMs: number;
  /**
   * Per statement text (shortened), calls and PostgreSQL execution time per order; empty without
   * pg_stat_statements.
   */
  statements: { query: string; callsPerOrder: number; msPerOrder: number }[];
  /**
   * CPU ms per second each process spent idle just before (timers, LISTEN, background jobs): the
   * share of the per-order figures that does not grow with the orders.
   */
  idleMsPerSecond: { server: number; worker: number; db: number };
  /** PostgreSQL sessions opened (pg_stat_database.sessions) per order: a reconnect costs a fork. */
  sessionsPerOrder: number;
  /** From the checkouts' start to the last payment's webhook (process.hrtime, µs). */
  window: { fromUs: number; toUs: number };
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function statementStats(pool: pg.Pool): Promise<boolean> {
  try {
    await pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    await pool.query("SELECT pg_stat_statements_reset()");
    return true;
  } catch {
    return false;
  }
}

/**
 * Waits until no payment is pending in the shop and the provider has delivered every event to the
 * shop's webhook (or `limitMs` passes).
 */
async function paymentsDone(pools: Pools, limitMs: number): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const [shop, provider] = await Promise.all([
      pools.shop.query<{ n: number }>(
        `SELECT count(*)::int AS "n" FROM "OutboxMessage" WHERE "status" = 'PENDING'`,
      ),
      pools.provider.query<{ n: number }>(
        `SELECT count(*)::int AS "n" FROM events WHERE delivered_at IS NULL`,
      ),
    ]);
    if (shop.rows[0]!.n + provider.rows[0]!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`order cost: payments still pending after ${limitMs} ms`);
}

export interface Pools {
  shop: pg.Pool;
  provider: pg.Pool;
}

const IDLE_SECONDS = 3;

async function sessionsOpened(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `SELECT sessions::text AS "n" FROM pg_stat_database WHERE datname = current_database()`,
  );
  return Number(rows[0]!.n);
}

async function idleRates(
  processes: { server: number[]; worker: number[] },
  dbPid: number,
): Promise<OrderCost["idleMsPerSecond"]> {
  const before = [cpuMsOf(processes.server), cpuMsOf(processes.worker), cpuMsOf([dbPid])];
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const after = [cpuMsOf(processes.server), cpuMsOf(processes.worker), cpuMsOf([dbPid])];
  const rate = (i: number) => (after[i]! - before[i]!) / IDLE_SECONDS;
  return { server: rate(0), worker: rate(1), db: rate(2) };
}

export async function measureOrderCost(
  pools: Pools,
  target: Target,
  processes: { server: number[]; worker: number[] },
  connections: number,
  requests: number,
  scenario: "new keys" | "floor" = "new keys",
): Promise<OrderCost> {
  await paymentsDone(pools, 30_000);
  await settle(target.pids);
  const pool = pools.shop;
  const idleMsPerSecond = await idleRates(processes, target.dbPid);
  const counting = await statementStats(pool);
  const sessions0 = await sessionsOpened(pool);
  const server0 = cpuMsOf(processes.server);
  const worker0 = cpuMsOf(processes.worker);
  const db0 = cpuMsOf([target.dbPid]);
  const fromUs = nowUs();
  const slice = await runSlice(target, scenario, connections, { requests });
  await paymentsDone(pools, 60_000);
  const toUs = nowUs();
  const wallSeconds = (toUs - fromUs) / 1e6;
  const serverMs = cpuMsOf(processes.server) - server0;
  const workerMs = cpuMsOf(processes.worker) - worker0;
  const dbMs = cpuMsOf([target.dbPid]) - db0;
  const orders = slice.statuses[200] ?? 0;
  const sessionsPerOrder = ((await sessionsOpened(pool)) - sessions0) / orders;
  if (figuresOf(slice).errors > 0) throw new Error(`order cost: ${figuresOf(slice).non2xx}`);
  let statements: OrderCost["statements"] = [];
  if (counting) {
    const { rows } = await pool.query<{ query: string; calls: string; ms: number }>(
      `SELECT regexp_replace(query, '\\s+', ' ', 'g') AS "query", sum(calls)::text AS "calls", sum(total_exec_time + total_plan_time) AS "ms"
       FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%"OutboxMessage" WHERE "status" = ''PENDING'') +%'
       GROUP BY 1 ORDER BY sum(calls) DESC`,
    );
    statements = rows.map((r) => ({
      query: r.query,
      callsPerOrder: Number(r.calls) / orders,
      msPerOrder: r.ms / orders,
    }));
  }
  return {
    orders,
    wallSeconds,
    serverMs,
    workerMs,
    dbMs,
    statements,
    idleMsPerSecond,
    sessionsPerOrder,
    window: { fromUs, toUs },
  };
}

const f2 = (n: number) => n.toFixed(2);
const short = (q: string) => (q.length > 110 ? `${q.slice(0, 107)}…` : q).replaceAll("|", "\\|");

/**
 * The app's paid order beside the floor's (the same checkout by hand, the same payment worker),
 * with their ratios.
 */
export function orderCostMarkdown(app: OrderCost, floor: OrderCost, connections: number): string {
  const per = (c: OrderCost, ms: number) => ms / c.orders;
  const rows: [string, (c: OrderCost) => number][] = [
    ["checkout server (next-server / floor server)", (c) => c.serverMs],
    ["payment worker (the floor's: + its webhooks' handling in next-server)", (c) => c.workerMs],
    ["PostgreSQL (all backends)", (c) => c.dbMs],
    ["**total**", (c) => c.serverMs + c.workerMs + c.dbMs],
  ];
  const lines = [
    `Checkouts with new keys at ${connections} connections (app: ${app.orders}; floor: ${floor.orders}), then every payment charged and its webhook handled; CPU from /proc over the whole of it, per order written`,
    "",
    "| process | app CPU ms / paid order | floor CPU ms / paid order | app / floor |",
    "|---|---:|---:|---:|",
    ...rows.map(
      ([name, pick]) =>
        `| ${name} | ${f2(per(app, pick(app)))} | ${f2(per(floor, pick(floor)))} | ${f2(per(app, pick(app)) / per(floor, pick(floor)))} |`,
    ),
  ];
  const idle = (c: OrderCost) =>
    `${c.wallSeconds.toFixed(1)} s from the first checkout to the last webhook; idle CPU just before, ms/s: ` +
    `server ${f2(c.idleMsPerSecond.server)}, worker ${f2(c.idleMsPerSecond.worker)}, PostgreSQL ${f2(c.idleMsPerSecond.db)}; ` +
    `PostgreSQL sessions opened per order: ${f2(c.sessionsPerOrder)}`;
  lines.push("", `App: ${idle(app)}.`, "", `Floor: ${idle(floor)}.`);
  return [lines.join("\n"), statementsMarkdown("app", app), statementsMarkdown("floor", floor)]
    .filter(Boolean)
    .join("\n\n");
}

function statementsMarkdown(name: string, c: OrderCost): string {
  const lines: string[] = [];
  if (c.statements.length) {
    const calls = c.statements.reduce((sum, s) => sum + s.callsPerOrder, 0);
    lines.push(
      `Statements per paid order, ${name} (pg_stat_statements; each is one round trip): **${f2(calls)}**`,
      "",
      "| calls / order | PG ms / order | statement |",
      "|---:|---:|---|",
      ...c.statements
        .filter((s) => s.callsPerOrder >= 0.05)
        .map(
          (s) => `| ${f2(s.callsPerOrder)} | ${s.msPerOrder.toFixed(3)} | \`${short(s.query)}\` |`,
        ),
    );
  }
  return lines.join("\n");
}
