// After the fire: wait for the outbox to drain, then run the app's jobs once more, through the
// same connection path as the instances (PgBouncer in that profile): the sweeper (every instance
// has stopped: any key whose lease ended), the reaper, reconciliation. The instances run them on their own schedule
// too, but minutes apart; the verdict must not depend on where a timer happened to be.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { reapExpiredKeys, sweepStuckKeys } from "@once/idempotency/jobs";
import { poolRunner } from "@once/idempotency/sql";
import { createDb, poolOf } from "../src/server/db/client";
import { runReconciliation } from "../src/server/payments";

/** Polls until no outbox row is PENDING (true), or `timeoutMs` passed (false). */
export async function waitForOutboxDrain(directUrl: string, timeoutMs: number): Promise<boolean> {
  const client = new pg.Client({ connectionString: directUrl });
  await client.connect();
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM "OutboxMessage" WHERE "status" = 'PENDING'`);
      if (rows[0]?.n === 0) return true;
      if (Date.now() > deadline) return false;
      await sleep(1_000); // the worker's own poll interval: nothing to await but its progress
    }
  } finally {
    await client.end();
  }
}

/** Run after the instances stopped, right before the facts are read: the sweep and the check see the same keys. */
export async function runEndOfRunJobs(o: { appUrl: string; throughPooler: boolean; providerUrl?: string }): Promise<string> {
  const db = createDb(o.appUrl, { max: 4, preparedStatements: !o.throughPooler });
  // The jobs hold no session state (a transaction-level lock per batch), so they run through
  // PgBouncer in transaction mode as they do in the instances.
  const run = poolRunner(poolOf(db)!);
  try {
    // Grace 0: every instance has stopped, so no request holds a lease; a key whose lease ended is
    // stuck. (With the lease as grace, a key whose lease ended just under it before the sweep and
    // just over it when the facts are read was counted as stuck: seen once in the patroni profile.)
    const swept = await sweepStuckKeys(run, { graceSeconds: 0 });
    const reaped = await reapExpiredKeys(run);
    const done = `swept ${swept.released} stuck keys, reaped ${reaped.deleted} (${reaped.ran ? "ran" : "lock held elsewhere"})`;
    // Reconciliation compares the provider's charges with the orders in one database; with books
    // of their own the checker compares them instead (facts.ts reads both).
    if (o.providerUrl) return `${done}, reconciliation off (the provider's books are in their own database)`;
    const reconciled = await runReconciliation(db);
    return `${done}, reconciliation ${reconciled.findings.length} findings`;
  } finally {
    await db.$disconnect();
  }
}
