// An attack on the production build: 1 000 `Prefer: wait` duplicates of one checkout, sent while
// the instance's line is full of other requests (every place taken, the queue full, newcomers
// refused 503 at once). The duplicates take no place in that line: they wait on the checkout in
// flight (src/server/edge/waiters.ts) and every one gets its answer, replayed, byte for byte; none
// is refused. The first checkout is held inside its transaction by a lock on its product, and the
// line's crowd checks out the same product, so everything in flight stays there until the test
// lets go: nothing depends on how fast the machine is.
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import pg from "pg";
import {
  ADMIN_TOKEN,
  checkout,
  refusalCounts,
  type Answer,
  useAttackTarget,
} from "./attack-target";

const target = useAttackTarget();

/** once_http_waiters from /api/metrics: requests waiting on a request in flight there. */
async function waiting(baseURL: string): Promise<number> {
  const res = await fetch(`${baseURL}/api/metrics`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  const line = /^once_http_waiters (\d+)$/m.exec(await res.text());
  return Number(line?.[1] ?? NaN);
}

/**
 * Clients that each send a new-key checkout again as soon as the last one is answered, a refusal's
 * Retry-After ignored: the crowd that matters, not the polite one.
 */
function crowd(baseURL: string, productId: string, clients: number) {
  let running = true;
  const answers: Answer[] = [];
  const loops = Array.from({ length: clients }, async () => {
    while (running) {
      // The crowd's own sockets may be closed under it (status 0): it is the line's filler, and
      // only the line being full is checked (below).
      const answer = await checkout(baseURL, productId).catch((): Answer => ({
        status: 0,
        replayed: false,
        body: "",
      }));
      answers.push(answer);
    }
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

test("1 000 Prefer: wait duplicates of a checkout in flight, the line full of other requests: 1 000 replays, no 503", async () => {
  test.setTimeout(180_000);
  // Four places and a queue of a hundred, so that a crowd of 120 fills the line. Waits up to 60 s,
  // so a slow machine does not end a wait before the test lets the first checkout go.
  const instance = await target.instance({
    HTTP_MAX_IN_FLIGHT: "4",
    IDEMPOTENCY_MAX_WAIT_MS: "60000",
  });
  const lock = new pg.Client({ connectionString: target.databaseUrl });
  await lock.connect();
  const { baseURL } = instance;
  const key = `waiters-${randomUUID()}`;
  let line: ReturnType<typeof crowd> | undefined;
  try {
    expect((await checkout(baseURL, target.productId)).status).toBe(200);
    await lock.query("BEGIN");
    await lock.query(`SELECT 1 FROM "Product" WHERE "id" = $1::uuid FOR UPDATE`, [
      target.productId,
    ]);
    // Checkouts waiting for a lock: the test's, or one queued behind it for the same row.
    const blocked = async () =>
      (
        await target.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE cardinality(pg_blocking_pids(pid)) > 0",
        )
      )[0]!.n;
    const first = checkout(baseURL, target.productId, { key });
    await expect.poll(blocked).toBe("1");
    // The line fills: three more places held by checkouts of the locked product, a hundred queued,
    // and the rest refused at once.
    const before = await refusalCounts(baseURL);
    line = crowd(baseURL, target.productId, 120);
    await expect.poll(blocked, { timeout: 30_000 }).toBe("4");
    await expect
      .poll(async () => (await refusalCounts(baseURL))["admission/store_busy"] ?? 0, {
        timeout: 30_000,
      })
      .toBeGreaterThan(before["admission/store_busy"] ?? 0);
    const duplicates = Array.from({ length: 1000 }, () =>
      checkout(baseURL, target.productId, { key, headers: { prefer: "wait=60" } }),
    );
    await expect.poll(() => waiting(baseURL), { timeout: 60_000 }).toBe(1000);
    // Still full: a newcomer is refused.
    const probe = await checkout(baseURL, target.productId);
    expect([probe.status, probe.reason]).toEqual([503, "store_busy"]);
    await lock.query("COMMIT");
    const original = await first;
    expect(original.status).toBe(200);
    const answers = await Promise.all(duplicates);
    const byStatus: Record<string, number> = {};
    for (const a of answers) {
      const name = `${a.status}${a.reason ? ` ${a.reason}` : ""}${a.replayed ? " replayed" : ""}`;
      byStatus[name] = (byStatus[name] ?? 0) + 1;
    }
    expect(byStatus).toEqual({ "200 replayed": 1000 });
    expect(answers.every((a) => a.body === original.body)).toBe(true);
    await line.stop();
    line = undefined;
    const orders = await target.query<{ n: string }>(
      `SELECT count(*) AS n FROM "Order" WHERE "idempotencyKey" = $1`,
      [key],
    );
    expect(orders[0]!.n).toBe("1");
  } finally {
    await lock.query("ROLLBACK").catch(() => {});
    await line?.stop();
    await lock.end();
    await instance.stop();
  }
});
