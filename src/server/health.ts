// The health answer: up, busy, down or unable to serve, and how old that news is. A health
// endpoint is public (load balancers call it without credentials), so it must not tell a stranger
// the database's host, port or driver: the reason a probe failed goes to the log (one line when
// the state changes), not to the caller.
//
// No query per caller: one probe loop per process (HealthMonitor, in the composition root) keeps
// the state fresh and every caller gets the last reading (measured before: 256 connections of
// GET /api/health, a query each, starved the API to 0 checkouts a second).
//
// Busy is not down: a saturated pool reads `busy` without queueing, 200 (keep sending: the
// instance refuses what it cannot serve itself, 503 store_busy), so a balancer keeps a working
// instance at its busiest; a failed probe is read by the engine's one classifier.
import pg from "pg";
import { classifyStoreFailure, StoreFailure } from "@once/idempotency/operator";
import { poolOf, STORE_WAIT_MS, type Db } from "./db/client";
import { logger } from "./logger";

/**
 * How often the probe runs: a load balancer checks every 2–5 s (HAProxy's default `inter` is 2 s),
 * so a reading at most a second old answers it as freshly as asking would, at one statement a
 * second per instance however many callers ask.
 */
export const PROBE_INTERVAL_MS = 1_000;
/**
 * How long the probe's `SELECT 1` may take once it has a connection: a connection that does not
 * answer that in 2 s (a host gone silent, with no reset to say so) is given up, so the loop goes
 * on with a new one.
 */
export const PROBE_ANSWER_MS = 2_000;
/**
 * A reading older than this means the probe is stuck (it waited the pool's wait, then the answer's
 * bound, and is still not back): down, whatever it last said.
 */
export const STALE_AFTER_MS = PROBE_INTERVAL_MS + STORE_WAIT_MS + PROBE_ANSWER_MS;

export type DatabaseState = "up" | "busy" | "down";

export type HealthBody =
  | { status: DatabaseState; database: DatabaseState; ageMs: number }
  | { status: "unable"; reason: "requests_stuck"; database: DatabaseState; ageMs: number };

/** What the instance knows about its own requests (src/server/edge/admission.ts). */
export interface RequestsInFlight {
  stuck(): boolean;
}

/**
 * Every connection in use and requests already waiting: the database is serving, this instance is
 * at capacity.
 */
function saturated(pool: pg.Pool): boolean {
  return (
    pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10) && pool.waitingCount > 0
  );
}

export class HealthMonitor {
  private reading?: { database: DatabaseState; at: number };
  private first?: Promise<void>;
  private timer?: NodeJS.Timeout;
  private stopped = false;
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

  /**
   * The last reading and its age. The first ask starts the loop and waits for its first probe (one
   * statement, shared by everyone asking meanwhile).
   */
  async current(): Promise<{ database: DatabaseState; ageMs: number }> {
    this.first ??= this.stopped ? this.probeOnce().then(() => {}) : this.loop();
    await this.first;
    const { database, at } = this.reading!;
    const ageMs = Math.round(this.now() - at);
    return { database: ageMs > STALE_AFTER_MS ? "down" : database, ageMs };
  }

  /** One probe, recorded: what the loop runs each interval. */
  async probeOnce(): Promise<DatabaseState> {
    const database = await this.probe();
    this.reading = { database, at: this.now() };
    return database;
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
  requests?: RequestsInFlight,
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
