// The payment settings are configuration, validated at start-up: a bad value names its variable.
import { describe, expect, it } from "vitest";
import { DEFAULT_OUTBOX_CONFIG, paymentSettings } from "./config";

describe("the outbox's retry settings", () => {
  it("default to the documented values and take the environment's", () => {
    expect(paymentSettings({}, true).outbox).toMatchObject({ maxAttempts: 8, maxBackoffMs: 300_000, leaseMs: DEFAULT_OUTBOX_CONFIG.leaseMs });
    expect(paymentSettings({ OUTBOX_MAX_BACKOFF_MS: "20000", OUTBOX_MAX_ATTEMPTS: "3" }, true).outbox).toMatchObject({ maxAttempts: 3, maxBackoffMs: 20_000 });
  });

  it("refuses a wait that is not a positive whole number of milliseconds, naming the variable", () => {
    for (const bad of ["0", "-5", "2.5", "soon"]) {
      expect(() => paymentSettings({ OUTBOX_MAX_BACKOFF_MS: bad }, true)).toThrow(/invalid payment configuration[\s\S]*OUTBOX_MAX_BACKOFF_MS/);
    }
  });
});
