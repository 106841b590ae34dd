// The payments backlog: outbox rows the checkout wrote and the workers have not yet delivered. The
// bench's payments phase counts what its checkouts created and delivered, then times the drain;
// the checkout slices each start with no backlog (run.ts, quiet), so none pays for another's payments.
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";

export interface OutboxCounts {
  total: number;
  pending: number;
  delivered: number;
  dead: number;
}

export async function outboxCounts(pool: pg.Pool): Promise<OutboxCounts> {
  const { rows } = await pool.query<OutboxCounts>(
    `SELECT count(*)::int AS "total",
            count(*) FILTER (WHERE "status" = 'PENDING')::int AS "pending",
            count(*) FILTER (WHERE "status" = 'DELIVERED')::int AS "delivered",
            count(*) FILTER (WHERE "status" = 'DEAD')::int AS "dead"
     FROM "OutboxMessage"`,
  );
  return rows[0]!;
}

export interface Drain {
  backlog: number;
  drained: number;
  seconds: number;
  /** Whether the backlog reached zero before the time limit. */
  complete: boolean;
}

/**
 * Polls until nothing is pending or `limitSeconds` pass; the servers keep running their workers.
 */
export async function timeDrain(pool: pg.Pool, limitSeconds: number): Promise<Drain> {
  const backlog = (await outboxCounts(pool)).pending;
  const started = performance.now();
  let pending = backlog;
  while (pending > 0 && performance.now() - started < limitSeconds * 1000) {
    await sleep(250);
    pending = (await outboxCounts(pool)).pending;
  }
  return {
    backlog,
    drained: backlog - pending,
    seconds: (performance.now() - started) / 1000,
    complete: pending === 0,
  };
}

export interface PaymentsReport {
  checkoutSeconds: number;
  created: number;
  deliveredDuringCheckout: number;
  drain: Drain;
}

export function paymentsMarkdown(r: PaymentsReport): string {
  const createdRate = r.created / r.checkoutSeconds;
  const deliveredRate = r.deliveredDuringCheckout / r.checkoutSeconds;
  const drainRate = r.drain.seconds > 0 ? r.drain.drained / r.drain.seconds : NaN;
  const lines = [
    "| payments (outbox) | rows | rows/s | ratio to checkout rate |",
    "|---|---:|---:|---:|",
    `| written by checkouts during the payments phase (${r.checkoutSeconds.toFixed(0)} s of checkouts) | ${r.created} | ${createdRate.toFixed(0)} | 1.00 |`,
    `| delivered during those checkouts | ${r.deliveredDuringCheckout} | ${deliveredRate.toFixed(0)} | ${(deliveredRate / createdRate).toFixed(2)} |`,
    `| backlog when the checkouts stopped | ${r.drain.backlog} | | |`,
    `| drained after it, no checkout load (${r.drain.seconds.toFixed(1)} s${r.drain.complete ? ", all" : ", time limit reached"}) | ${r.drain.drained} | ${drainRate.toFixed(0)} | ${(drainRate / createdRate).toFixed(2)} |`,
  ];
  if (!r.drain.complete && drainRate > 0) {
    lines.push(
      `\nNot drained within the limit: at ${drainRate.toFixed(0)} rows/s the rest (${r.drain.backlog - r.drain.drained}) would take about ${((r.drain.backlog - r.drain.drained) / drainRate).toFixed(0)} s more (estimate).`,
    );
  }
  return lines.join("\n");
}
