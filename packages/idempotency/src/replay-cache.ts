// Finished answers in this process's memory. A COMPLETED or FAILED key's answer never changes
// until it is busted or expires, so a retry can be answered without a round trip. The rules are
// those of a stored record: same scope and key, same fingerprint (else 422), not past retention.
// Busts reach every instance through PostgreSQL LISTEN/NOTIFY (evictions.ts); without a listener
// the engine runs without this cache, since a bust elsewhere would go unheard.
// Bounded twice: by entries and by bytes (bodies are stored up to maxStoredBodyBytes each, so a
// count alone could hold gigabytes); the least recently used entries leave first.
import type { RequestFingerprint } from "./fingerprint.js";
import type { Outcome } from "./outcome.js";
import type { KeyRecord, StoredResponse } from "./store/types.js";

interface Entry {
  fingerprint: string;
  outcome: Outcome;
  /** This process's clock when the record's retention ends. */
  expiresAtLocal: number;
  /** What the entry is counted as against the byte budget. */
  bytes: number;
}

/**
 * Map entry, key, fingerprint, outcome and dates: what an entry costs besides its body and headers.
 */
const ENTRY_OVERHEAD_BYTES = 256;

/**
 * An entry's weight: its body (a JS string holds up to 2 bytes per character), headers and
 * overhead.
 */
export function weightOf(scopeAndKey: string, response: StoredResponse): number {
  let bytes =
    ENTRY_OVERHEAD_BYTES +
    2 * (scopeAndKey.length + response.body.length + response.contentType.length);
  bytes += response.bytes?.byteLength ?? 0;
  for (const [name, value] of response.headers ?? []) bytes += 2 * (name.length + value.length);
  return bytes;
}

export interface ReplayCacheLimits {
  maxEntries: number;
  maxBytes: number;
}

export type CacheHit = { kind: "replay"; outcome: Outcome } | { kind: "mismatch" };

const SEP = "\u0000";

export class ReplayCache {
  private readonly entries = new Map<string, Entry>();
  /** Whether answers are being served from memory (the listener is connected). */
  serving = true;
  /** What the entries weigh together, against `limits.maxBytes`. */
  bytes = 0;
  /**
   * Bumped by every eviction. A request stamps it before it reads the store and may only cache
   * what it read if no eviction came in between: otherwise a retry that read a key just before a
   * bust could put the busted answer back after the bust's eviction.
   */
  private epoch = 0;

  constructor(private readonly limits: ReplayCacheLimits) {}

  get size(): number {
    return this.entries.size;
  }

  has(scope: string, key: string): boolean {
    return this.entries.has(scope + SEP + key);
  }

  /** Off (and emptied) while evictions cannot be heard. */
  setEnabled(enabled: boolean): void {
    this.serving = enabled;
    if (!enabled) this.clear();
  }

  get(scope: string, key: string, print: RequestFingerprint): CacheHit | undefined {
    if (!this.serving) return undefined;
    const id = scope + SEP + key;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    if (Date.now() >= entry.expiresAtLocal) {
      this.remove(id); // past retention: the key is absent, the request runs anew
      return undefined;
    }
    this.entries.delete(id); // least recently used goes first: move to the back
    this.entries.set(id, entry);
    return print.matches(entry.fingerprint)
      ? { kind: "replay", outcome: entry.outcome }
      : { kind: "mismatch" };
  }

  /** Take before reading the store; pass to put. */
  stamp(): number {
    return this.epoch;
  }

  /** `outcome` as stored: a body above maxStoredBodyBytes is already left out of it. */
  put(record: KeyRecord, outcome: Outcome, stamp: number): void {
    if (this.limits.maxEntries === 0 || !this.serving || stamp !== this.epoch) return;
    const id = record.scope + SEP + record.key;
    const bytes = weightOf(id, outcome.response);
    this.remove(id);
    if (bytes > this.limits.maxBytes) return; // would push out everything else: read from the store instead
    const expiresAtLocal = Date.now() + (record.expiresAt.getTime() - record.dbNow.getTime());
    this.entries.set(id, {
      fingerprint: record.fingerprint,
      outcome: { ...outcome, replayed: true },
      expiresAtLocal,
      bytes,
    });
    this.bytes += bytes;
    while (this.entries.size > this.limits.maxEntries || this.bytes > this.limits.maxBytes)
      this.remove(this.entries.keys().next().value!);
  }

  evict(scope: string, key: string): void {
    this.epoch++;
    this.remove(scope + SEP + key);
  }

  /** After a lost listener connection: evictions may have been missed, so trust nothing. */
  clear(): void {
    this.epoch++;
    this.entries.clear();
    this.bytes = 0;
  }

  private remove(id: string): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.bytes -= entry.bytes;
  }
}
