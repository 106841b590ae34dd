// Every refusal the engine gives, in one table: the stable word a client branches on
// (`error.data.reason` on the wire), its HTTP status, and what the caller should do about it.
// The app's errors page and the package README are written from this table.

export const Reason = {
  KEY_MISSING: "idempotency_key_missing",
  KEY_INVALID: "idempotency_key_invalid",
  BATCH_NOT_ALLOWED: "idempotency_batch_not_allowed",
  KEY_REUSED: "idempotency_key_reused",
  IN_PROGRESS: "request_in_progress",
  UNIQUE_VIOLATION: "unique_violation",
  TOO_MANY_KEYS: "too_many_keys",
  STORE_UNAVAILABLE: "store_unavailable",
  STORE_BUSY: "store_busy",
  COMMIT_UNCONFIRMED: "commit_unconfirmed",
  PAYLOAD_TOO_LARGE: "payload_too_large",
  REPLAY_BODY_OMITTED: "replay_body_omitted",
} as const;
export type Reason = (typeof Reason)[keyof typeof Reason];

export interface ReasonInfo {
  status: 400 | 409 | 413 | 422 | 429 | 503;
  /** What happened, in one sentence. */
  meaning: string;
  /** What the caller should do. */
  remedy: string;
}

export const REASONS: Record<Reason, ReasonInfo> = {
  idempotency_key_missing: {
    status: 400,
    meaning: "The request changes state but carries no Idempotency-Key header.",
    remedy:
      "Send a fresh Idempotency-Key (a UUID is ideal) with every new operation, and the same key on its retries.",
  },
  idempotency_key_invalid: {
    status: 400,
    meaning:
      "The Idempotency-Key is not 1 to 255 visible ASCII characters, bare or as an RFC 8941 quoted string.",
    remedy: "Use a UUID or another short token of letters, digits and punctuation.",
  },
  idempotency_batch_not_allowed: {
    status: 400,
    meaning: "One Idempotency-Key cannot cover a batch of several calls.",
    remedy: "Send each mutation as its own request, each with its own key.",
  },
  idempotency_key_reused: {
    status: 422,
    meaning:
      "This Idempotency-Key was already used for a request with another operation or other input.",
    remedy:
      "Use a new key for a new operation; resend the original input to get the original answer.",
  },
  request_in_progress: {
    status: 409,
    meaning: "A request with this Idempotency-Key is still being processed.",
    remedy:
      "Retry with the same key after Retry-After seconds: you will get that request's answer.",
  },
  unique_violation: {
    status: 409,
    meaning:
      "The request's own write hit a unique constraint (the error names its fields): a conflict with data that exists, stored with the key and replayed to every retry.",
    remedy:
      "Do not retry with the same key: change the conflicting value and send it as a new request with a new key.",
  },
  too_many_keys: {
    status: 429,
    meaning: "This account holds as many live idempotency keys as it may.",
    remedy:
      "Retry after Retry-After seconds, once older keys have expired; retries of keys you hold still work.",
  },
  store_unavailable: {
    status: 503,
    meaning: "The idempotency key store (the database) cannot be reached, so nothing was executed.",
    remedy: "Retry with the same key after Retry-After seconds.",
  },
  store_busy: {
    status: 503,
    meaning:
      "The server is up but busy: it already works on as many requests as it takes, or no connection to the key store (the database) came free in time. Nothing was executed.",
    remedy:
      "Retry with the same key after Retry-After seconds (the time the requests before yours take to finish); if it keeps happening, the operator adds capacity (pool size, instances).",
  },
  commit_unconfirmed: {
    status: 503,
    meaning:
      "The request was executed and committed on the primary database, but its synchronous standby did not confirm it, so a failover could still undo it.",
    remedy:
      "Retry with the same key after Retry-After seconds: you will get its answer if it survived, or it runs again if it did not.",
  },
  payload_too_large: {
    status: 413,
    meaning:
      "The request body is larger than this route accepts; it was not read whole, and nothing was recorded.",
    remedy: "Send a smaller body.",
  },
  replay_body_omitted: {
    // Over plain HTTP a replay keeps the first answer's status and headers, with this reason in
    // its problem body; tRPC, which cannot answer a success without its data, answers 413.
    status: 413,
    meaning:
      "This key's request ran once, but its answer was larger than the largest stored answer, so it was kept without its body: a replay gives the first answer's status and headers, not its body.",
    remedy:
      "Read the result another way (a GET of the resource it made); do not resend it under a new key unless you want it to run again.",
  },
};

// The headers the protocol speaks and the events it counts, beside its reasons: the vocabulary of
// the wire and of a dashboard, safe in a browser.
export { Header, CounterEvent } from "./constants.js";
