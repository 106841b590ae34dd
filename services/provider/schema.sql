-- The simulated provider's books, in a database of its own (never the shop's). Applied by the
-- service at start; every statement is idempotent, so starting it again changes nothing.

-- One row per charge. The merchant's idempotency key is unique: a repeat of a request returns the
-- first charge instead of making a second one (a real provider keeps keys for a day or so; this one
-- keeps them for ever).
CREATE TABLE IF NOT EXISTS charges (
  id              text PRIMARY KEY,
  idempotency_key text NOT NULL UNIQUE,
  reference       text NOT NULL,
  amount_cents    integer NOT NULL,
  currency        text NOT NULL,
  status          text NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
  -- clock_timestamp(), not now(): the list API orders by it, and a charge is listed by when it was made.
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- The list API pages by (created_at, id).
CREATE INDEX IF NOT EXISTS charges_created_idx ON charges (created_at, id);

-- One event per charge, delivered to the merchant's webhook until it answers 2xx.
CREATE TABLE IF NOT EXISTS events (
  id              text PRIMARY KEY,
  type            text NOT NULL,
  charge_id       text NOT NULL REFERENCES charges (id),
  payload         jsonb NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text
);
CREATE INDEX IF NOT EXISTS events_undelivered_idx ON events (next_attempt_at) WHERE delivered_at IS NULL;
