// How many requests a measured slice sends: enough for about `sliceSeconds` at the rate the same
// cell ran last time (or the warm-up's rate for its path, the first time). Slices sized by count
// end when every answer is in, so no slice leaves work behind for the next one.
import { setTimeout as sleep } from "node:timers/promises";
import { cpuMsOf } from "./cpu";
import type pg from "pg";
import type { Amount, Slice } from "./load";

export class Pace {
  private readonly rates = new Map<string, number>();
  constructor(private readonly sliceSeconds: number) {}

  /** Remembers the rate `key` ran at; `fallbackKey` also learns it if it knows nothing yet. */
  record(key: string, slice: Slice, fallbackKey?: string): void {
    const rate = (slice.latenciesMs.length / slice.wallMs) * 1000;
    if (!(rate > 0)) return;
    this.rates.set(key, rate);
    if (fallbackKey && !this.rates.has(fallbackKey)) this.rates.set(fallbackKey, rate);
  }

  amount(key: string, fallbackKey: string, connections: number): Amount {
    const rate = this.rates.get(key) ?? this.rates.get(fallbackKey) ?? 50;
    // At least one request per connection (autocannon's minimum): on a slow machine the
    // 256-connection cells take longer than sliceSeconds rather than measure nothing.
    return { requests: Math.max(connections, Math.round(rate * this.sliceSeconds)) };
  }
}

/**
 * After a slice that ran for a fixed time (warm-ups), waits until the servers have finished the
 * requests it abandoned: until their CPU use over 200 ms falls under a tenth of a core (the
 * background jobs' idle polling stays well below that), or 5 s pass.
 */
export async function settle(pids: readonly number[]): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    const before = cpuMsOf(pids);
    await sleep(200);
    if (cpuMsOf(pids) - before < 20) return;
  }
}

/**
 * Until no order written so far waits for its payment, or `maxMs` pass: polled, a condition. The
 * orders a checkout slice writes are charged after it; a slice measured while they are charged
 * shares the cores with that, and would be compared with one that did not. False when `maxMs`
 * passed with orders still unpaid (nobody charging them, or too slowly), for a bench to say so.
 */
export async function paymentsSettled(pool: pg.Pool, maxMs = 30_000): Promise<boolean> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const { rows } = await pool.query<{ waiting: number }>(
      `SELECT count(*)::int AS "waiting" FROM "Order" WHERE "status" = 'PENDING'`,
    );
    if (rows[0]!.waiting === 0) return true;
    await sleep(100);
  }
  return false;
}
