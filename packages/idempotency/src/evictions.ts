// What every instance hears about keys, on one direct connection per process (a
// transaction-mode pooler such as PgBouncer cannot carry LISTEN):
// - busts: the operator's delete sends NOTIFY in its own transaction (delivered only if it
//   commits); each instance evicts the key from its replay cache and wakes its waiters;
// - settles: the completion, the stored failure and the release send NOTIFY in the statement or
//   transaction that settles the key (store/sql.ts), so it is heard only once the answer is
//   committed and readable; each instance wakes the requests waiting on that key (Prefer: wait).
// While the listener is not connected the cache is switched off and emptied, since an eviction
// could be missed, and waiting is not offered.
import { randomUUID } from "node:crypto";
import type pg from "pg";
import { EVICTION_CHANNEL, SETTLED_CHANNEL } from "./constants.js";
import type { ReplayCache } from "./replay-cache.js";
import type { SqlRunner } from "./store/postgres.js";
import type { KeyWaiters } from "./wait/waiters.js";

export { EVICTION_CHANNEL, SETTLED_CHANNEL };

/**
 * Tells every instance to forget the key's cached answer. Run it in the transaction that removes
 * the key.
 */
export async function announceEviction(run: SqlRunner, scope: string, key: string): Promise<void> {
  await run.execute("SELECT pg_notify($1, $2)", [EVICTION_CHANNEL, JSON.stringify([scope, key])]);
}

/**
 * The scope of a barrier's announcement (a key scope cannot hold a NUL): an instance that hears it
 * evicts and wakes nothing, and the one that sent it knows it has heard everything before it.
 */
const BARRIER_SCOPE = "\u0000barrier";

/** Reconnects after 250 ms, doubling to 5 s. */
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

export class EvictionListener {
  private client: pg.Client | undefined;
  private stopped = false;
  private retryMs = FIRST_RETRY_MS;
  private timer: NodeJS.Timeout | undefined;
  private connected!: () => void;
  private isConnected = false;
  /** Barriers sent and not yet heard back, by token. */
  private readonly barriers = new Map<string, () => void>();
  /** Resolves once the first LISTEN is in place (tests and start-up wait on it). */
  readonly ready = new Promise<void>((resolve) => (this.connected = resolve));

  constructor(
    private readonly connect: () => pg.Client,
    private readonly cache: ReplayCache | undefined,
    private readonly waiters: KeyWaiters,
  ) {
    this.setConnected(false);
  }

  /**
   * Resolves once this listener has heard every announcement committed before the call. PostgreSQL
   * delivers notifications to a listener in commit order, so hearing a barrier sent after them
   * means having heard them. While disconnected it resolves at once: the cache is off and empty, so
   * nothing stale can be served.
   */
  async caughtUp(send: (channel: string, payload: string) => Promise<void>): Promise<void> {
    if (!this.isConnected) return;
    const token = randomUUID();
    const heard = new Promise<void>((resolve) => this.barriers.set(token, resolve));
    try {
      await send(EVICTION_CHANNEL, JSON.stringify([BARRIER_SCOPE, token]));
    } catch (error) {
      this.barriers.delete(token);
      throw error;
    }
    await heard;
  }

  start(): this {
    void this.open();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.setConnected(false);
    await this.client?.end().catch(() => {});
  }

  private async open(): Promise<void> {
    const client = this.connect();
    this.client = client;
    client.on("notification", (message) => {
      const [scope, key] = parsePayload(message.payload);
      if (scope === undefined || key === undefined) {
        this.cache?.clear(); // an announcement we cannot read: forget everything rather than replay stale
        return;
      }
      if (scope === BARRIER_SCOPE) {
        this.barriers.get(key)?.();
        this.barriers.delete(key);
        return;
      }
      if (message.channel === EVICTION_CHANNEL) this.cache?.evict(scope, key);
      this.waiters.wake(scope, key);
    });
    client.on("error", () => this.lost(client));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${EVICTION_CHANNEL}; LISTEN ${SETTLED_CHANNEL}`);
      this.retryMs = FIRST_RETRY_MS;
      this.setConnected(true);
      this.connected();
    } catch {
      this.lost(client);
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return; // an older connection's late event
    this.client = undefined;
    this.setConnected(false);
    client.end().catch(() => {});
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.open(), this.retryMs);
    this.timer.unref();
    this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
  }

  private setConnected(connected: boolean): void {
    this.isConnected = connected;
    if (!connected) {
      // Disconnected: the cache is emptied below, so a barrier's wait is over.
      for (const resolve of this.barriers.values()) resolve();
      this.barriers.clear();
    }
    this.cache?.setEnabled(connected);
    this.waiters.setListening(connected);
  }
}

function parsePayload(payload = ""): [string?, string?] {
  try {
    const [scope, key] = JSON.parse(payload) as unknown[];
    if (typeof scope === "string" && typeof key === "string") return [scope, key];
  } catch {
    // not a JSON array: unreadable
  }
  return [];
}
