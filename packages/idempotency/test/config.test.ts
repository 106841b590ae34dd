import { describe, expect, it } from "vitest";
import { DEFAULT_ENGINE_CONFIG, parseEngineConfig } from "../src/entry/config";

describe("engine configuration", () => {
  it("has the documented defaults", () => {
    expect(parseEngineConfig()).toEqual(DEFAULT_ENGINE_CONFIG);
    expect(DEFAULT_ENGINE_CONFIG).toMatchObject({
      leaseMs: 30_000,
      ttlSeconds: 86_400,
      maxLiveKeys: 100_000,
      transactionTimeoutMs: 60_000,
    });
  });

  it("takes each value given", () => {
    expect(
      parseEngineConfig({
        leaseMs: 1_500,
        ttlSeconds: 60,
        maxLiveKeys: 7,
        liveKeyCountTtlMs: 0,
        replayCacheSize: 0,
      }),
    ).toMatchObject({
      leaseMs: 1_500,
      ttlSeconds: 60,
      maxLiveKeys: 7,
      liveKeyCountTtlMs: 0,
      replayCacheSize: 0,
    });
  });

  it.each([
    [{ leaseMs: 0 }, "leaseMs"],
    [{ ttlSeconds: 1.5 }, "ttlSeconds"],
    [{ maxLiveKeys: -3 }, "maxLiveKeys"],
    [{ liveKeyCountTtlMs: -1 }, "liveKeyCountTtlMs"],
    [{ leaseMs: "30000" }, "leaseMs"],
    [{ lease: 5 }, "lease"],
  ])("refuses %j with a message naming %s", (input, name) => {
    expect(() => parseEngineConfig(input as never)).toThrow(name);
  });
});
