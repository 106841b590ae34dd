// One Idempotency-Key per *intent*. An intent is "send this input", as the person meant it once:
//
//   - the same input again before a final answer (a double-click, React Query's retry, pressing the
//     button again after the link gave up on a lost connection) is the same intent: same key, so
//     the server runs it once and answers the others with its replay;
//   - another input is another intent: a new key (reusing the old one would get 422);
//   - after a final answer (success, or a final error such as 412 or `409 unique_violation`) the
//     intent is over: the next call, even with the same input, is a new intent with a new key.
//     Posting "hello" twice on purpose makes two posts; a retry of an unanswered one never does.
//
// One pending intent at a time (a form has one thing it is sending). It lives in memory, or in a
// `storage` (sessionStorage) when a reload must find it again, as a fingerprint of the input: the
// input itself (perhaps personal data) is never written there.

/** The part of `Storage` used here: sessionStorage, localStorage, or anything with these three. */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export interface PendingIntent {
  /** fingerprintOf(input) */
  fingerprint: string;
  key: string;
  /** epoch ms of the intent's first send */
  startedAt: number;
}

export interface IntentKeysOptions {
  /** Makes the key of a new intent (default: a random UUID). */
  newKey?: () => string;
  /**
   * Keeps the pending intent there (e.g. `sessionStorage`) so a reload resumes it; default: memory.
   */
  storage?: KeyValueStorage;
  /** The entry's name in `storage`. */
  storageKey?: string;
  /**
   * A pending intent older than this is forgotten: the server keeps a key 24 h by default
   * (ttlSeconds), after which the key could not be answered from any more.
   */
  maxAgeMs?: number;
  now?: () => number;
}

export interface IntentKeys {
  /**
   * The intent for sending `input` now: the pending one when it is for the same input, else a new
   * one (keyed `key` when given).
   */
  begin(input: unknown, key?: string): PendingIntent;
  /** The pending intent, whatever its input. */
  pending(): PendingIntent | null;
  /** The pending intent when it is for `input`. */
  pendingFor(input: unknown): PendingIntent | null;
  /**
   * A final answer for `input` arrived: its intent is over (a pending intent for another input
   * stays).
   */
  settle(input: unknown): void;
  /** Forgets the pending intent. */
  clear(): void;
}

export const DEFAULT_INTENT_MAX_AGE_MS = 24 * 60 * 60 * 1000;
const DEFAULT_STORAGE_KEY = "once.idempotency.intent";

export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

/**
 * A short, stable fingerprint of an input: its JSON with object keys sorted (so key order does
 * not matter), Dates as ISO strings, Maps, Sets and BigInts spelled out, hashed with cyrb53 (53
 * bits, 14 hex digits). It tells inputs apart in one browser tab; it is not a security boundary.
 */
export function fingerprintOf(input: unknown): string {
  const text =
    JSON.stringify(input, (_key, value: unknown) => {
      if (typeof value === "bigint") return `${value}n`;
      if (value instanceof Map) return { "<map>": [...value.entries()] };
      if (value instanceof Set) return { "<set>": [...value] };
      if (value !== null && typeof value === "object" && !Array.isArray(value)) {
        const record = value as Record<string, unknown>;
        return Object.fromEntries(
          Object.keys(record)
            .sort()
            .map((k) => [k, record[k]]),
        );
      }
      return value;
    }) ?? "undefined";
  return cyrb53(text);
}

function cyrb53(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

function parseIntent(raw: string | null): PendingIntent | null {
  if (!raw) return null;
  try {
    const { fingerprint, key, startedAt } = JSON.parse(raw) as Partial<PendingIntent>;
    const valid = typeof fingerprint === "string" && typeof key === "string";
    return valid && typeof startedAt === "number" ? { fingerprint, key, startedAt } : null;
  } catch {
    return null; // garbage in storage is no intent
  }
}

export function createIntentKeys(options: IntentKeysOptions = {}): IntentKeys {
  const slot = intentSlot(options.storage, options.storageKey ?? DEFAULT_STORAGE_KEY);
  const maxAgeMs = options.maxAgeMs ?? DEFAULT_INTENT_MAX_AGE_MS;
  const now = options.now ?? Date.now;
  const makeKey = options.newKey ?? newIdempotencyKey;

  const read = (): PendingIntent | null => {
    const intent = slot.read();
    return intent && now() - intent.startedAt <= maxAgeMs ? intent : null;
  };
  const pendingFor = (input: unknown) => {
    const pending = read();
    return pending && pending.fingerprint === fingerprintOf(input) ? pending : null;
  };
  return {
    begin(input, key) {
      const pending = pendingFor(input);
      if (pending) return pending;
      const intent: PendingIntent = {
        fingerprint: fingerprintOf(input),
        key: key ?? makeKey(),
        startedAt: now(),
      };
      slot.write(intent); // before anything is sent, so a reload in the middle finds it
      return intent;
    },
    pending: read,
    pendingFor,
    settle(input) {
      if (pendingFor(input)) slot.write(null);
    },
    clear: () => slot.write(null),
  };
}

/**
 * Where the pending intent is kept: `storage` under `name`, with an in-memory copy. Storage may be
 * absent, full, disabled or throwing (private browsing): from its first failure on, the in-memory
 * copy alone keeps this page's retries on one key.
 */
function intentSlot(storage: KeyValueStorage | undefined, name: string) {
  let memory: PendingIntent | null = null;
  let storageWorks = storage !== undefined;
  return {
    read(): PendingIntent | null {
      if (!storageWorks) return memory;
      try {
        return parseIntent(storage!.getItem(name));
      } catch {
        storageWorks = false;
        return memory;
      }
    },
    write(intent: PendingIntent | null): void {
      memory = intent;
      if (!storageWorks) return;
      try {
        if (intent) storage!.setItem(name, JSON.stringify(intent));
        else storage!.removeItem(name);
      } catch {
        storageWorks = false;
      }
    },
  };
}
