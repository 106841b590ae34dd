import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, engineConfigFromEnv } from "./config";

const NAMES = ["IDEMPOTENCY_LEASE_MS", "IDEMPOTENCY_TTL_SECONDS", "IDEMPOTENCY_MAX_LIVE_KEYS", "IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS"];
afterEach(() => {
  for (const name of NAMES) delete process.env[name];
});

describe("engine configuration from the environment", () => {
  it("uses the documented defaults when nothing is set", () => {
    expect(engineConfigFromEnv()).toEqual(DEFAULT_ENGINE_CONFIG);
    expect(DEFAULT_ENGINE_CONFIG).toMatchObject({ leaseMs: 30_000, ttlSeconds: 86_400, maxLiveKeys: 100_000 });
  });

  it("reads each variable", () => {
    process.env.IDEMPOTENCY_LEASE_MS = "1500";
    process.env.IDEMPOTENCY_TTL_SECONDS = "60";
    process.env.IDEMPOTENCY_MAX_LIVE_KEYS = "7";
    process.env.IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS = "0";
    expect(engineConfigFromEnv()).toMatchObject({ leaseMs: 1_500, ttlSeconds: 60, maxLiveKeys: 7, liveKeyCountTtlMs: 0 });
  });

  it.each([
    ["IDEMPOTENCY_LEASE_MS", "abc"],
    ["IDEMPOTENCY_LEASE_MS", "0"],
    ["IDEMPOTENCY_TTL_SECONDS", "1.5"],
    ["IDEMPOTENCY_MAX_LIVE_KEYS", "-3"],
    ["IDEMPOTENCY_LIVE_KEY_COUNT_TTL_MS", "-1"],
  ])("refuses %s=%s with a message naming it", (name, value) => {
    process.env[name] = value;
    expect(() => engineConfigFromEnv()).toThrow(`${name} must be an integer`);
  });
});
