// Finished answers in this process's memory. A COMPLETED or FAILED key's answer never changes
// until it is busted or expires, so a retry can be answered without a round trip. The rules are
// those of a stored record: same scope and key, same fingerprint (else 422), not past retention.
// Busts reach every instance through PostgreSQL LISTEN/NOTIFY (evictions.ts); without a listener
// the engine runs without this cache, since a bust elsewhere would go unheard.
import type { Outcome } from "./outcome.js";
import type { KeyRecord } from "./store/types.js";

interface Entry {
  fingerprint: string;
  outcome: Outcome;
  /** This process's clock when the record's retention ends. */
  expiresAtLocal: number;
}

export type CacheHit = { kind: "replay"; outcome: Outcome } | { kind: "mismatch" };

const SEP = "\u0000";

export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  private enabled = true;
  /**
   * Bumped by every eviction. A request stamps it before it reads the store and may only cache
   * what it read if no eviction came in between: otherwise a retry that read a key just before a
   * bust could put the busted answer back after the bust's eviction.
   */
  private epoch = 0;

  constructor(private readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size;
  }

  /** Whether answers are being served from memory (the listener is connected). */
  get serving(): boolean {
    return this.enabled;
  }

  has(scope: string, key: string): boolean {
    return this.entries.has(scope + SEP + key);
  }

  /** Off (and emptied) while evictions cannot be heard. */
  setEnabled(enabled: boolean): void {
    this.enabled = enabled;
    if (!enabled) this.clear();
  }

  get(scope: string, key: string, fingerprint: string): CacheHit | undefined {
    if (!this.enabled) return undefined;
    const id = scope + SEP + key;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (Date.now() >= entry.expiresAtLocal) {
      this.entries.delete(id); // past retention: the key is absent, the request runs anew
      return undefined;
    }
    this.entries.delete(id); // least recently used goes first: move to the back
    this.entries.set(id, entry);
    return entry.fingerprint === fingerprint ? { kind: "replay", outcome: entry.outcome } : { kind: "mismatch" };
  }

  /** Take before reading the store; pass to put. */
  stamp(): number {
    return this.epoch;
  }

  put(record: KeyRecord, outcome: Outcome, stamp: number): void {
    if (this.maxEntries === 0 || !this.enabled || stamp !== this.epoch) return;
    const id = record.scope + SEP + record.key;
    const expiresAtLocal = Date.now() + (record.expiresAt.getTime() - record.dbNow.getTime());
    this.entries.delete(id);
    this.entries.set(id, { fingerprint: record.fingerprint, outcome: { ...outcome, replayed: true }, expiresAtLocal });
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  evict(scope: string, key: string): void {
    this.epoch++;
    this.entries.delete(scope + SEP + key);
  }

  /** After a lost listener connection: evictions may have been missed, so trust nothing. */
  clear(): void {
    this.epoch++;
    this.entries.clear();
  }
}
