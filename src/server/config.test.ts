// The one configuration: every variable validated once, a bad or missing one named in the one
// sentence the process prints before it refuses to start.
import { describe, expect, it } from "vitest";
import { loadConfig, loadDatabaseConfig, loadSetupConfig, loadWorkerConfig } from "./config";
import { DEMO_PROVIDER_SECRET_KEY } from "@/payments";

const SECRET = "a-webhook-secret-of-at-least-32-characters";
const PROVIDER_KEY = "sk_live_a_provider_key_of_32_characters_or_more";
/** A production server's minimum: its database, the webhook's secret, the provider's key. */
const production = {
  NODE_ENV: "production",
  DATABASE_URL: "postgresql://db:5432/once",
  PAYMENTS_WEBHOOK_SECRET: SECRET,
  PAYMENTS_PROVIDER_SECRET_KEY: PROVIDER_KEY,
};

describe("a production server", () => {
  it("starts with its minimum, demo mode off, every default in place", () => {
    const config = loadConfig(production, { role: "server" });
    expect(config.demo).toBe(false);
    expect(config.engine).toMatchObject({
      leaseMs: 30_000,
      ttlSeconds: 86_400,
      maxLiveKeys: 100_000,
      replayCacheSize: 10_000,
    });
    expect(config.payments.outbox).toMatchObject({ maxAttempts: 9, maxBackoffMs: 300_000 });
    expect(config.jobs).toEqual({ background: true, payments: true });
    expect(config.database).toEqual({
      url: production.DATABASE_URL,
      directUrl: production.DATABASE_URL,
      preparedStatements: true,
    });
    expect(config.logLevel).toBe("info");
    expect(config.payments.providerSecretKey).toBe(PROVIDER_KEY);
    expect(config.payments.reconcileBudget).toEqual({
      maxPages: 1_000,
      maxPageBytes: 1024 * 1024,
      maxRunMs: 120_000,
    });
  });

  it("refuses the demo provider key outside demo mode, and uses it in demo mode when none is set", () => {
    expect(() =>
      loadConfig({ ...production, PAYMENTS_PROVIDER_SECRET_KEY: DEMO_PROVIDER_SECRET_KEY }),
    ).toThrow(/PAYMENTS_PROVIDER_SECRET_KEY is the demo key/);
    expect(
      loadConfig({ ...production, DEMO_MODE: "1", PAYMENTS_PROVIDER_SECRET_KEY: undefined })
        .payments.providerSecretKey,
    ).toBe(DEMO_PROVIDER_SECRET_KEY);
  });

  it.each([
    ["DATABASE_URL", /DATABASE_URL is not set/],
    ["PAYMENTS_WEBHOOK_SECRET", /PAYMENTS_WEBHOOK_SECRET is not set/],
    ["PAYMENTS_PROVIDER_SECRET_KEY", /PAYMENTS_PROVIDER_SECRET_KEY is not set/],
  ])("refuses to start without %s, in one sentence naming it", (name, sentence) => {
    expect(() => loadConfig({ ...production, [name]: undefined }, { role: "server" })).toThrow(
      sentence,
    );
    // An empty value is an unset one.
    expect(() => loadConfig({ ...production, [name]: "" }, { role: "server" })).toThrow(sentence);
  });

  it.each([
    ["IDEMPOTENCY_LEASE_MS", "soon"],
    ["IDEMPOTENCY_LEASE_MS", "0"],
    ["IDEMPOTENCY_TTL_SECONDS", "1.5"],
    ["IDEMPOTENCY_MAX_WAIT_MS", "-1"],
    ["OUTBOX_MAX_BACKOFF_MS", "0"],
    ["OUTBOX_MAX_ATTEMPTS", "many"],
    ["PAYMENTS_PROVIDER_URL", "not a url"],
    ["RECONCILE_INTERVAL_MS", "0"],
    ["PAYMENTS_WEBHOOK_SECRET", "short"],
    ["PAYMENTS_PROVIDER_SECRET_KEY", "sk_short"],
    ["PAYMENTS_PROVIDER_SECRET_KEY", "sk live key with spaces 0123456789abcdef"],
    ["DEMO_MODE", "yes"],
    ["ONCE_PAYMENT_JOBS", "off"],
    ["ONCE_BACKGROUND_JOBS", "no"],
    ["DATABASE_PREPARED_STATEMENTS", "yes"],
    ["LOG_LEVEL", "loud"],
    ["RECONCILE_INTERVAL_MS", "0"],
    ["TRUSTED_PROXIES", "lots"],
    ["DATABASE_URL", "not a url"],
    ["DIRECT_DATABASE_URL", "http://db:5432/once"],
  ])("refuses %s=%s, naming the variable in one line", (name, value) => {
    expect(() => loadConfig({ ...production, [name]: value })).toThrow(new RegExp(name));
    expect(() => loadConfig({ ...production, [name]: value })).toThrow(/^[^\n]+$/);
  });
});

describe("the engine's variables", () => {
  it("each sets its field of the engine's configuration", () => {
    const engine = loadConfig({
      ...production,
      IDEMPOTENCY_LEASE_MS: "31000",
      IDEMPOTENCY_TTL_SECONDS: "3600",
      IDEMPOTENCY_MAX_LIVE_KEYS: "7",
      IDEMPOTENCY_COUNTER_FLUSH_MS: "60000",
      IDEMPOTENCY_MAX_WAIT_MS: "0",
    }).engine;
    expect(engine).toMatchObject({
      leaseMs: 31_000,
      ttlSeconds: 3_600,
      maxLiveKeys: 7,
      counterFlushMs: 60_000,
      maxWaitMs: 0,
    });
  });
});

describe("demo mode", () => {
  it("is on in development unless DEMO_MODE says otherwise, off elsewhere unless DEMO_MODE=1", () => {
    expect(loadConfig({ NODE_ENV: "development" }).demo).toBe(true);
    expect(
      loadConfig({
        NODE_ENV: "development",
        DEMO_MODE: "0",
        PAYMENTS_WEBHOOK_SECRET: SECRET,
        PAYMENTS_PROVIDER_SECRET_KEY: PROVIDER_KEY,
      }).demo,
    ).toBe(false);
    expect(loadConfig({ ...production, DEMO_MODE: "1" }).demo).toBe(true);
    expect(loadConfig(production).demo).toBe(false);
  });
});

describe("where the payment loops run", () => {
  it("in the server unless ONCE_PAYMENT_JOBS=0", () => {
    expect(loadConfig(production).jobs.payments).toBe(true);
    expect(loadConfig({ ...production, ONCE_PAYMENT_JOBS: "0" }).jobs.payments).toBe(false);
  });
});

describe("DATABASE_PREPARED_STATEMENTS", () => {
  it("prepares statements on a direct connection, not behind a pooler, unless told", () => {
    const pooler = {
      ...production,
      DIRECT_DATABASE_URL: "postgresql://db:5432/once",
      DATABASE_URL: "postgresql://pgbouncer:6432/once",
    };
    expect(loadConfig(production).database.preparedStatements).toBe(true);
    expect(loadConfig(pooler).database).toMatchObject({
      url: pooler.DATABASE_URL,
      directUrl: pooler.DIRECT_DATABASE_URL,
      preparedStatements: false,
    });
    expect(
      loadConfig({ ...pooler, DATABASE_PREPARED_STATEMENTS: "1" }).database.preparedStatements,
    ).toBe(true);
    expect(
      loadConfig({ ...production, DATABASE_PREPARED_STATEMENTS: "0" }).database.preparedStatements,
    ).toBe(false);
  });
});

describe("the outbox's retry settings", () => {
  it("take the environment's values", () => {
    expect(
      loadConfig({ ...production, OUTBOX_MAX_BACKOFF_MS: "20000", OUTBOX_MAX_ATTEMPTS: "3" })
        .payments.outbox,
    ).toMatchObject({
      maxAttempts: 3,
      maxBackoffMs: 20_000,
    });
  });
});

describe("each command reads only its own sections", () => {
  const url = production.DATABASE_URL;
  /** Variables only the HTTP server reads, all invalid. */
  const badServerOnly = {
    TRUSTED_PROXIES: "lots",
    DEMO_ALLOW_REMOTE: "maybe",
    ONCE_PAYMENT_JOBS: "off",
    HTTP_MAX_IN_FLIGHT: "many",
  };
  /** Variables of the engine and the payments, invalid. */
  const badWorker = {
    IDEMPOTENCY_LEASE_MS: "soon",
    OUTBOX_MAX_ATTEMPTS: "many",
    PAYMENTS_WEBHOOK_SECRET: "short",
  };

  it("db:setup: DATABASE_URL alone, outside demo mode, without the webhook's secret", () => {
    expect(
      loadSetupConfig({ DATABASE_URL: url, ...badServerOnly, ...badWorker, LOG_LEVEL: "loud" }),
    ).toEqual({
      demo: false,
      database: { url, directUrl: url, preparedStatements: true },
    });
    expect(loadSetupConfig({ DATABASE_URL: url, DEMO_MODE: "1" }).demo).toBe(true);
    expect(() => loadSetupConfig({})).toThrow(
      /^DATABASE_URL is not set: `npm run db:setup` prepares your own PostgreSQL/,
    );
    expect(() => loadSetupConfig({ DATABASE_URL: "db.example:5432" })).toThrow(
      /DATABASE_URL must be a postgresql:\/\/ URL/,
    );
  });

  it("users, reconcile: the database's variables only, the URL may be the running app's", () => {
    expect(loadDatabaseConfig({ ...badServerOnly, ...badWorker, DEMO_MODE: "yes" })).toMatchObject({
      url: undefined,
    });
    expect(() => loadDatabaseConfig({ DATABASE_URL: "nonsense" })).toThrow(/DATABASE_URL/);
  });

  it("the worker: database, engine and payments, not the server's own settings", () => {
    const worker = loadWorkerConfig({ ...production, ...badServerOnly });
    expect(worker).toMatchObject({ demo: false, payments: { webhookSecret: SECRET } });
    expect(worker).not.toHaveProperty("http");
    expect(() => loadWorkerConfig({ ...production, PAYMENTS_WEBHOOK_SECRET: undefined })).toThrow(
      /PAYMENTS_WEBHOOK_SECRET is not set/,
    );
    expect(() => loadWorkerConfig({ ...production, OUTBOX_MAX_ATTEMPTS: "many" })).toThrow(
      /OUTBOX_MAX_ATTEMPTS/,
    );
    // The server reads all of it.
    expect(() => loadConfig({ ...production, ...badServerOnly })).toThrow(/TRUSTED_PROXIES/);
  });
});
