-- The simulated provider's books, in a database of its own (never the shop's). Applied by the
-- service at start; every statement is idempotent, so starting it again changes nothing.

-- One row per charge, made by one shop (the merchant its secret key named: shops.ts). A shop's
-- idempotency key is unique within that shop: a repeat of a request returns the first charge
-- instead of making a second one, and another shop's same key is another charge (a real provider
-- keeps keys for a day or so; this one keeps them for ever).
CREATE TABLE IF NOT EXISTS charges (
  id              text PRIMARY KEY,
  -- 'once' for a row written without a shop: books kept before shops existed, and test fixtures
  -- inserted by hand, are the one shop that every starter configures under that id.
  shop_id         text NOT NULL DEFAULT 'once',
  idempotency_key text NOT NULL,
  reference       text NOT NULL,
  amount_cents    integer NOT NULL,
  currency        text NOT NULL,
  status          text NOT NULL CHECK (status IN ('SUCCEEDED', 'FAILED')),
  -- clock_timestamp(), not now(): the list API orders by it, and a charge is listed by when it was made.
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
-- Books kept before shops existed: their charges become the shop 'once''s, and their keys unique
-- per shop instead of across the provider.
ALTER TABLE charges ADD COLUMN IF NOT EXISTS shop_id text NOT NULL DEFAULT 'once';
ALTER TABLE charges DROP CONSTRAINT IF EXISTS charges_idempotency_key_key;
CREATE UNIQUE INDEX IF NOT EXISTS charges_shop_key_idx ON charges (shop_id, idempotency_key);
-- The list API pages one shop's charges by (created_at, id).
DROP INDEX IF EXISTS charges_created_idx;
CREATE INDEX IF NOT EXISTS charges_shop_created_idx ON charges (shop_id, created_at, id);

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
