// The health answer: up, busy, down or unable to serve, and how old that news is. It is public, so
// why a probe failed goes to the log (one line when the state changes), never to the caller.
// No query per caller: one probe loop per process keeps the state fresh (a query each, 256
// connections of GET /api/health starved the API to 0 checkouts a second). Busy is not down: a
// saturated pool reads `busy`, 200, so a balancer keeps a working instance at its busiest.
import pg from "pg";
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import { poolOf, STORE_WAIT_MS, type Db } from "./db/client";
import { logger } from "./logger";

/**
 * How often the probe runs: a load balancer checks every 2–5 s (HAProxy's `inter`: 2 s), so a
 * reading at most a second old is as fresh as asking, at one statement a second per instance.
 */
const PROBE_INTERVAL_MS = 1_000;
/** How long `SELECT 1` may take once connected: a host gone silent is given up after it. */
const PROBE_ANSWER_MS = 2_000;
/** A reading older than this means the probe is stuck (past the pool's wait and the answer's). */
export const STALE_AFTER_MS = PROBE_INTERVAL_MS + STORE_WAIT_MS + PROBE_ANSWER_MS;

type DatabaseState = "up" | "busy" | "down";

export type HealthBody =
  | { status: DatabaseState; database: DatabaseState; ageMs: number }
  | { status: "unable"; reason: "requests_stuck"; database: DatabaseState; ageMs: number };

/** Every connection in use and requests waiting: the database serves, this instance is full. */
const saturated = (pool: pg.Pool) =>
  pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10) && pool.waitingCount > 0;

export class HealthMonitor {
  private reading?: { database: DatabaseState; at: number };
  private first?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** Probes begun so far, and who waits for one begun after theirs to find the database back. */
  private probesBegun = 0;
  private readonly waiting = new Set<{ after: number; back: () => void }>();
  private readonly intervalMs: number;
  private readonly now: () => number;

  /** `intervalMs`, `now` (a monotonic clock in ms): for tests. */
  constructor(
    private readonly db: Db,
    options: { intervalMs?: number; now?: () => number } = {},
  ) {
    this.intervalMs = options.intervalMs ?? PROBE_INTERVAL_MS;
    this.now = options.now ?? (() => performance.now());
  }

  /** The last reading and its age; the first ask starts the loop and waits for its first probe. */
  async current(): Promise<{ database: DatabaseState; ageMs: number }> {
    this.first ??= this.stopped ? this.probeOnce().then(() => {}) : this.loop();
    await this.first;
    const { database, at } = this.reading!;
    const ageMs = Math.round(this.now() - at);
    return { database: ageMs > STALE_AFTER_MS ? "down" : database, ageMs };
  }

  /** One probe, recorded: what the loop runs each interval. */
  async probeOnce(): Promise<DatabaseState> {
    const begun = ++this.probesBegun;
    const database = await this.probe();
    this.reading = { database, at: this.now() };
    for (const waiter of this.waiting)
      if (database !== "down" && waiter.after < begun) {
        this.waiting.delete(waiter);
        waiter.back();
      }
    return database;
  }

  /**
   * Resolves once a probe begun after this call finds the database answering (a probe already in
   * flight may predate the outage the caller saw); starts the loop if nothing asked yet.
   */
  answersAgain(): Promise<void> {
    const answered = new Promise<void>((back) =>
      this.waiting.add({ after: this.probesBegun, back }),
    );
    this.first ??= this.loop();
    return answered;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Probes now, then again an interval after each probe ends (never two at once). */
  private async loop(): Promise<void> {
    await this.probeOnce();
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.loop(), this.intervalMs);
    this.timer.unref(); // the loop never keeps a process alive on its own
  }

  private async probe(): Promise<DatabaseState> {
    const pool = poolOf(this.db);
    if (pool && saturated(pool)) return "busy";
    let database: DatabaseState = "up";
    let reason = "";
    try {
      const probe = { text: "SELECT 1", query_timeout: PROBE_ANSWER_MS } as pg.QueryConfig;
      await (pool ? pool.query(probe) : this.db.$queryRaw`SELECT 1`);
    } catch (error) {
      database = classifyStoreFailure(error) === StoreFailure.BUSY ? "busy" : "down";
      reason = error instanceof Error ? error.message : String(error);
    }
    // One line when it goes down (the reason, not a stack), one when it is back.
    if (database === "down" && this.reading?.database !== "down")
      logger.warn({ reason }, "health: the database does not answer");
    else if (database !== "down" && this.reading?.database === "down")
      logger.info({ database }, "health: the database answers again");
    return database;
  }
}

const NO_STORE = { "Cache-Control": "no-store" };

/**
 * GET /api/health from the last reading: 200 for up or busy, 503 (Retry-After 1) for down, or
 * when the instance's requests are stuck (every admission place held and none come free), whatever
 * the database says: a balancer must hear that this instance cannot serve.
 */
export async function healthAnswer(
  monitor: HealthMonitor,
  /** What the instance knows about its own requests (src/server/edge/admission.ts). */
  requests?: { stuck(): boolean },
): Promise<Response> {
  const { database, ageMs } = await monitor.current();
  const body: HealthBody = requests?.stuck()
    ? { status: "unable", reason: "requests_stuck", database, ageMs }
    : { status: database, database, ageMs };
  const serving = body.status === "up" || body.status === "busy";
  return Response.json(body satisfies HealthBody, {
    status: serving ? 200 : 503,
    headers: serving ? NO_STORE : { "Retry-After": "1", ...NO_STORE },
  });
}
