// After the fire: wait for the outbox to drain and for reconciliation (running by itself in the
// instances or the worker) to judge every charge the provider holds. Nothing is run by hand: the
// verdict reads what the app's own jobs did, on their own schedule, as an operator would find it.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { SWEEPER_GRACE_SECONDS, SWEEPER_INTERVAL_MS } from "@once/idempotency/jobs";
import { waitFor } from "../../tools/process";

/**
 * The instances' reconciliation interval during a soak (RECONCILE_INTERVAL_MS): a lost order's
 * charge is a finding well within the drain.
 */
export const RECONCILE_EVERY_MS = 10_000;
/**
 * Reconciliation leaves the last 30 s to its next run (SETTLE_SECONDS): 30 s, plus two intervals,
 * plus slack.
 */
export const RECONCILE_SETTLE_WAIT_MS = 90_000;
/**
 * A key still PROCESSING whose lease ended longer ago than this should have been released by the
 * sweeper, which runs every SWEEPER_INTERVAL_MS and releases leases ended SWEEPER_GRACE_SECONDS
 * ago: its real window, with no end-of-run sweep to tidy up first.
 */
export const STUCK_AFTER_SECONDS = SWEEPER_GRACE_SECONDS + SWEEPER_INTERVAL_MS / 1000;

/** Polls until no outbox row is PENDING (true), or `timeoutMs` passed (false). */
export async function waitForOutboxDrain(directUrl: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: directUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "OutboxMessage" WHERE "status" = 'PENDING'`,
      );
      if (rows[0]?.n === 0) return true;
      if (Date.now() > deadline) return false;
      await sleep(1_000); // the worker's own poll interval: nothing to await but its progress
    }
  } finally {
    await client.end();
  }
}

/**
 * Until reconciliation's cursor has passed the provider's newest charge (true), or `timeoutMs`
 * passed (false).
 */
export async function waitForReconciliation(
  directUrl: string,
  providerDatabaseUrl: string,
  timeoutMs: number,
): Promise<boolean> {
  const shop = new pg.Client({ connectionString: directUrl });
  const books = new pg.Client({ connectionString: providerDatabaseUrl });
  await Promise.all([shop.connect(), books.connect()]);
  try {
    const newest = (
      await books.query<{ at: Date | null }>(`SELECT max(created_at) AS at FROM charges`)
    ).rows[0]?.at;
    if (!newest) return true;
    await waitFor(
      "reconciliation to judge every charge",
      async () =>
        (
          await shop.query<{ at: Date }>(
            `SELECT "judgedThrough" AS at FROM "ReconciliationCursor" WHERE "name" = 'provider-charges'`,
          )
        ).rows.some((r) => r.at.getTime() >= newest.getTime() - 1_000),
      timeoutMs,
    );
    return true;
  } catch {
    return false;
  } finally {
    await Promise.all([shop.end(), books.end()]);
  }
}
