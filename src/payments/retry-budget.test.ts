// The retry budget as the docs state it: the time a row waits between its attempts before it is
// dead-lettered, from the backoff itself (jitter included), and the same figures in config.ts's
// comments, the README's configuration table and the operations guide, so they cannot drift.
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { backoffMs, deadLetterWindowMs } from "./backoff";
import { DEFAULT_OUTBOX_CONFIG } from "./config";

const ROOT = path.resolve(import.meta.dirname, "../..");
/** A file's text with its line breaks (and comment markers after them) as single spaces. */
const read = (file: string) =>
  readFileSync(path.join(ROOT, file), "utf8")
    .replace(/\n\s*(\*(?!\/)|\/\/)?/g, " ")
    .replace(/\s+/g, " ");
const window = (maxAttempts: number) => {
  const { minMs, maxMs } = deadLetterWindowMs({ ...DEFAULT_OUTBOX_CONFIG, maxAttempts });
  return `${minMs / 1000} s to ${maxMs / 1000} s`;
};

describe("the retry budget", () => {
  it("is the sum of the waits between the attempts, with the jitter at its least and its most", () => {
    const waits = (random: () => number) =>
      Array.from({ length: DEFAULT_OUTBOX_CONFIG.maxAttempts - 1 }, (_, i) =>
        backoffMs(i + 1, DEFAULT_OUTBOX_CONFIG, random),
      ).reduce((a, b) => a + b, 0);
    const { minMs, maxMs } = deadLetterWindowMs(DEFAULT_OUTBOX_CONFIG);
    expect({ minMs, maxMs }).toEqual({ minMs: waits(() => 0), maxMs: waits(() => 1) });
    // Any draw of the jitter lands inside the window.
    let seed = 42;
    const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    for (let run = 0; run < 1000; run++) {
      const total = waits(random);
      expect(total).toBeGreaterThanOrEqual(minMs);
      expect(total).toBeLessThanOrEqual(maxMs);
    }
  });

  it("rides out a provider outage of four minutes by default", () => {
    expect(deadLetterWindowMs(DEFAULT_OUTBOX_CONFIG).minMs).toBeGreaterThanOrEqual(240_000);
  });

  it.each(["src/payments/config.ts", "README.md", "docs/operations.md"])(
    "%s states the default's window as the backoff computes it",
    (file) => {
      const text = read(file);
      expect(text).toContain(`${DEFAULT_OUTBOX_CONFIG.maxAttempts} attempts`);
      expect(text).toContain(window(DEFAULT_OUTBOX_CONFIG.maxAttempts));
    },
  );

  it("config.ts's figure for the former default (8 attempts) is the backoff's too", () => {
    expect(read("src/payments/config.ts")).toContain(`8 attempts waited only ${window(8)}`);
  });
});
