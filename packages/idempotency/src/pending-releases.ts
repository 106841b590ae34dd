// A key whose release failed because the store was gone would otherwise block its retries (409)
// for the rest of its lease. Releases that failed are retried here until the store is back, so
// the client's retry runs as soon as it can, not after the whole lease.
import type { KeyRecord } from "./store/types.js";

/** First retry after 250 ms, doubling to 2 s: a restarted PostgreSQL is back within seconds. */
const FIRST_DELAY_MS = 250;
const MAX_DELAY_MS = 2_000;

interface Pending {
  record: KeyRecord;
  onReleased: () => void;
  /** This process's clock when the lease ends: after that a retry takes the key over anyway. */
  leaseEndsAt: number;
}

export class PendingReleases {
  private readonly pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  private delayMs = FIRST_DELAY_MS;

  constructor(private readonly release: (record: KeyRecord) => Promise<boolean>) {}

  get size(): number {
    return this.pending.size;
  }

  add(record: KeyRecord, onReleased: () => void): void {
    const leaseLeftMs = (record.leaseExpiresAt?.getTime() ?? 0) - record.dbNow.getTime();
    this.pending.set(record.id, { record, onReleased, leaseEndsAt: Date.now() + leaseLeftMs });
    this.delayMs = FIRST_DELAY_MS;
    this.schedule();
  }

  /** One pass over the pending releases; returns how many are still pending. */
  async retryOnce(): Promise<number> {
    for (const [id, p] of this.pending) {
      if (Date.now() >= p.leaseEndsAt) {
        this.pending.delete(id);
        continue;
      }
      try {
        if (await this.release(p.record)) p.onReleased();
        this.pending.delete(id); // released, or no longer ours to release (fenced)
      } catch {
        return this.pending.size; // still gone: try again later
      }
    }
    return this.pending.size;
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer || this.pending.size === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.retryOnce().then((left) => {
        this.delayMs = Math.min(this.delayMs * 2, MAX_DELAY_MS);
        if (left > 0) this.schedule();
      });
    }, this.delayMs);
    this.timer.unref();
  }
}
