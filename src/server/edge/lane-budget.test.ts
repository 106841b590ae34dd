// A lane's time budget: a burst is served at once, a lane busy without a break is held to its
// share, and a lane that rested has its burst again. The clock is performance.now(), moved here.
import { afterEach, describe, expect, it, vi } from "vitest";
import { LANE_REQUEST_MS, NEXT_REQUEST_MS, TimeBudget } from "./lane-budget";

let now = 0;
afterEach(() => vi.restoreAllMocks());
const at = (ms: number) => {
  now = ms;
  vi.spyOn(performance, "now").mockImplementation(() => now);
};

describe("a lane's time budget", () => {
  it("serves a burst at once, then holds the lane to its share", () => {
    at(0);
    const budget = new TimeBudget(0.1, 500);
    // 500 ms of requests within the burst: no idle time.
    for (let i = 0; i < 5; i++) expect(budget.spend(100)).toBe(0);
    // Past it, 100 ms owed at a tenth: 1 000 ms idle before the place is handed on.
    expect(budget.spend(100)).toBeCloseTo(1_000);
    // 1 000 ms later the debt is paid; the next 100 ms is owed again.
    now = 1_000;
    expect(budget.spend(100)).toBeCloseTo(1_000);
  });

  it("refills while the lane rests, up to the burst", () => {
    at(0);
    const budget = new TimeBudget(0.1, 500);
    expect(budget.spend(600)).toBeCloseTo(1_000);
    now = 60_000;
    for (let i = 0; i < 5; i++) expect(budget.spend(100)).toBe(0);
    expect(budget.spend(100)).toBeGreaterThan(0);
  });

  it("owes at most one burst, however long a request took", () => {
    at(0);
    const budget = new TimeBudget(0.1, 500);
    // A page that waited a minute on a database that was down: 500 ms owed, not 59 500.
    expect(budget.spend(60_000)).toBeCloseTo(5_000);
    // Five seconds later the debt is paid: this request owes only its own cost.
    now = 5_000;
    expect(budget.spend(0)).toBeCloseTo(LANE_REQUEST_MS / 0.1);
  });

  it("counts every request as at least LANE_REQUEST_MS", () => {
    at(0);
    const budget = new TimeBudget(0.1, 10);
    for (let i = 0; i < 10; i++) expect(budget.spend(0.01)).toBe(0);
    expect(budget.spend(0.01)).toBeCloseTo(LANE_REQUEST_MS / 0.1);
  });

  it("counts a page Next.js answered as at least NEXT_REQUEST_MS, whatever its clock saw", () => {
    at(0);
    const budget = new TimeBudget(0.1, 40, NEXT_REQUEST_MS);
    // A prerendered page's handler returns in a fraction of a millisecond: ten fill the burst.
    for (let i = 0; i < 40 / NEXT_REQUEST_MS; i++) expect(budget.spend(0.2)).toBe(0);
    expect(budget.spend(0.2)).toBeCloseTo(NEXT_REQUEST_MS / 0.1);
  });

  it("bounds nothing with a share of 1", () => {
    at(0);
    const budget = new TimeBudget(1);
    expect(budget.spend(60_000)).toBe(0);
  });
});
