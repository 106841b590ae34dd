// The demo's slow-processing knob: honoured in demo mode (NODE_ENV=test is not production), capped.
import { describe, expect, it } from "vitest";
import { demoDelayMs, MAX_DEMO_DELAY_MS } from "./demo-delay";

const DEMO = { demo: true };
const withHeader = (value?: string) =>
  new Headers(value === undefined ? {} : { "x-demo-delay-ms": value });

describe("demoDelayMs", () => {
  it("pauses only when the header asks", () => {
    expect(demoDelayMs(withHeader(), DEMO)).toBe(0);
    expect(demoDelayMs(withHeader(), { demo: false })).toBe(0);
  });
  it("honours the header in demo mode, capped at 30 s, ignoring nonsense", () => {
    expect(demoDelayMs(withHeader("250"), DEMO)).toBe(250);
    expect(demoDelayMs(withHeader("999999"), DEMO)).toBe(MAX_DEMO_DELAY_MS);
    expect(demoDelayMs(withHeader("-5"), DEMO)).toBe(0);
    expect(demoDelayMs(withHeader("soon"), DEMO)).toBe(0);
  });
  it("ignores the header outside demo mode", () => {
    expect(demoDelayMs(withHeader("250"), { demo: false })).toBe(0);
  });
});
