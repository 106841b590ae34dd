import { describe, expect, it } from "vitest";
import { bucketed, chartChoices } from "./chart-buckets";

describe("bucketed", () => {
  it("sums consecutive points, the last bucket shorter", () => {
    expect(bucketed([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([6, 15, 7]);
  });

  it("turns a day of minutes into 96 quarter-hours without losing a count", () => {
    const minutes = Array.from({ length: 1440 }, (_, i) => i % 7);
    const quarters = bucketed(minutes, 15);
    expect(quarters).toHaveLength(96);
    expect(quarters.reduce((a, b) => a + b, 0)).toBe(minutes.reduce((a, b) => a + b, 0));
  });
});

describe("chartChoices", () => {
  const pairs = [
    { tenant: "small", procedure: "a", volume: 1 },
    { tenant: "big", procedure: "p1", volume: 50 },
    { tenant: "big", procedure: "p2", volume: 40 },
    { tenant: "big", procedure: "p3", volume: 30 },
    { tenant: "quiet", procedure: "x", volume: 0 },
  ];

  it("offers every tenant with data, busiest first, with its busiest procedures", () => {
    const choices = chartChoices(pairs, 2);
    expect(choices.map((c) => c.label)).toEqual([
      "big · every procedure (3)",
      "big · p1",
      "big · p2",
      "small · every procedure",
      "small · a",
      "quiet · every procedure",
      "quiet · x",
    ]);
    expect(choices[0]!.input).toEqual({ tenant: "big" });
    expect(choices[1]!.input).toEqual({ tenant: "big", procedure: "p1" });
  });
});
