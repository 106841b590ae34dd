// Where the payment loops run is configuration, validated at start-up like the rest.
import { describe, expect, it } from "vitest";
import { parseEnv } from "./env";

describe("ONCE_PAYMENT_JOBS", () => {
  it("runs the payment loops in the server unless told otherwise", () => {
    expect(parseEnv({}).ONCE_PAYMENT_JOBS).toBe("1");
    expect(parseEnv({ ONCE_PAYMENT_JOBS: "0" }).ONCE_PAYMENT_JOBS).toBe("0");
  });

  it("refuses anything but 0 or 1, naming the variable", () => {
    expect(() => parseEnv({ ONCE_PAYMENT_JOBS: "off" })).toThrow(/invalid configuration[\s\S]*ONCE_PAYMENT_JOBS/);
  });
});
