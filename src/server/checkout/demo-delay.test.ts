// The demo's slow-processing knob: honoured in demo mode (NODE_ENV=test is not production), capped.
import { describe, expect, it } from "vitest";
import { demoDelayMs, MAX_DEMO_DELAY_MS } from "./demo-delay";

const withHeader = (value?: string) => new Headers(value === undefined ? {} : { "x-demo-delay-ms": value });

describe("demoDelayMs", () => {
  it("defaults to DEMO_PROCESSING_DELAY_MS (0 here)", () => {
    expect(demoDelayMs(withHeader())).toBe(0);
  });
  it("honours the header in demo mode, capped at 30 s, ignoring nonsense", () => {
    expect(demoDelayMs(withHeader("250"))).toBe(250);
    expect(demoDelayMs(withHeader("999999"))).toBe(MAX_DEMO_DELAY_MS);
    expect(demoDelayMs(withHeader("-5"))).toBe(0);
    expect(demoDelayMs(withHeader("soon"))).toBe(0);
  });
});
