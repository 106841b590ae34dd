// The reachability rules on a clock of our own: a burst of failures is not an outage, failures
// for DOWN_AFTER_MS with nothing answered are, said once, and the first answer says it is back.
import { describe, expect, it } from "vitest";
import {
  createProviderReachability,
  DOWN_AFTER_FAILURES,
  DOWN_AFTER_MS,
} from "./provider-reachability";

function tracker() {
  let clock = 1_000_000;
  const lines: { level: string; fields: object; message: string }[] = [];
  const logger = {
    warn: (fields: object, message: string) => void lines.push({ level: "warn", fields, message }),
    info: (fields: object, message: string) => void lines.push({ level: "info", fields, message }),
  };
  const r = createProviderReachability(logger, () => clock);
  return { r, lines, advance: (ms: number) => void (clock += ms) };
}
const refused = new Error("payment provider unreachable (ECONNREFUSED)");

describe("the provider's reachability", () => {
  it("a burst of failures within one round is not an outage", () => {
    const { r, lines } = tracker();
    for (let i = 0; i < 20; i++) r.failed(`row${i}`, refused);
    expect(r.down).toBe(false);
    expect(lines).toEqual([]);
  });

  it("failures spread over DOWN_AFTER_MS with no answer are an outage, said once", () => {
    const { r, lines, advance } = tracker();
    r.failed("a", refused);
    advance(DOWN_AFTER_MS);
    for (let i = 1; i < DOWN_AFTER_FAILURES; i++) r.failed("b", refused);
    expect(r.down).toBe(true);
    advance(60_000);
    for (let i = 0; i < 100; i++) r.failed(`c${i}`, refused);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      fields: { provider: "unreachable", failedForSeconds: 5, waitingSends: 2 },
    });
    expect(lines[0]!.message).toContain("ECONNREFUSED");
  });

  it("one failure over a long time is not an outage: it needs DOWN_AFTER_FAILURES", () => {
    const { r, advance } = tracker();
    r.failed("a", refused);
    advance(10 * DOWN_AFTER_MS);
    r.failed("a", refused);
    expect(DOWN_AFTER_FAILURES).toBeGreaterThan(2);
    expect(r.down).toBe(false);
  });

  it("the first answer after an outage says it is back, how long it was down and how many sends waited", () => {
    const { r, lines, advance } = tracker();
    for (let i = 0; i < 3; i++) r.failed(`row${i}`, refused);
    advance(DOWN_AFTER_MS);
    r.failed("row0", refused);
    advance(25_000);
    r.answered();
    r.answered();
    expect(r.down).toBe(false);
    expect(lines.map((l) => l.level)).toEqual(["warn", "info"]);
    expect(lines[1]!.fields).toEqual({ provider: "reachable", downForSeconds: 30, waitedSends: 3 });
  });

  it("an answer before the outage was declared ends the streak silently", () => {
    const { r, lines, advance } = tracker();
    r.failed("a", refused);
    r.failed("a", refused);
    r.answered();
    advance(DOWN_AFTER_MS);
    r.failed("a", refused);
    expect(r.down).toBe(false);
    expect(lines).toEqual([]);
  });
});
