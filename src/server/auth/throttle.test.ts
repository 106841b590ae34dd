// The sign-in throttle against a real PostgreSQL: budgets per account-and-source and per source,
// a slow-down (never a refusal) per account, shared between two app instances (two pools),
// atomic under concurrent guesses, and a window that ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, useTestDatabase } from "../../test/database";
import { type Db } from "../db/client";
import {
  forgetStaleAttempts,
  giveBackAttempt,
  recordFailure,
  slowdownMs,
  SLOWDOWN,
  takeAttempt,
  throttleKeys,
  type ThrottleLimits,
} from "./throttle";

const t = useTestDatabase({ poolMax: 10 });
const LIMITS: ThrottleLimits = {
  perAccountAndSource: 5,
  perSource: 8,
  accountSlowAfter: 5,
  windowSeconds: 900,
};

let secondInstance: Db;
beforeAll(() => {
  secondInstance = createTestDb(t.url, { max: 10 });
});
afterAll(async () => {
  await secondInstance?.$disconnect();
});

const allowedCount = (decisions: { allowed: boolean }[]) =>
  decisions.filter((d) => d.allowed).length;

async function row(key: string) {
  return t.db.signInThrottle.findUnique({ where: { key } });
}

/** A failed guess, as sign-in records it: the attempt taken, then the failure counted. */
async function failedGuess(keys: ReturnType<typeof throttleKeys>) {
  const decision = await takeAttempt(t.db, keys, LIMITS);
  if (decision.allowed) await recordFailure(t.db, keys, LIMITS);
  return decision;
}

describe("per account and source", () => {
  it("five guesses pass, the sixth from the same source is refused with the time left in the window", async () => {
    const keys = throttleKeys("victim@example.com", "203.0.113.1");
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await failedGuess(keys));
    expect(allowedCount(first)).toBe(5);
    const sixth = await takeAttempt(t.db, keys, LIMITS);
    expect(sixth.allowed).toBe(false);
    if (!sixth.allowed) expect(sixth.retryAfterSeconds).toBeGreaterThan(890);
    if (!sixth.allowed) expect(sixth.retryAfterSeconds).toBeLessThanOrEqual(900);
  });

  it("a refused source does not refuse the account: another source still gets its attempt", async () => {
    const victim = "locked-out@example.com";
    for (let i = 0; i < 6; i++) await failedGuess(throttleKeys(victim, "203.0.113.2"));
    expect((await takeAttempt(t.db, throttleKeys(victim, "203.0.113.2"), LIMITS)).allowed).toBe(
      false,
    );
    expect((await takeAttempt(t.db, throttleKeys(victim, "198.51.100.20"), LIMITS)).allowed).toBe(
      true,
    );
  });

  it("the e-mail address is one account whatever its case or spaces", async () => {
    expect(throttleKeys(" Victim@Example.COM ", "a").account).toBe(
      throttleKeys("victim@example.com", "b").account,
    );
    expect(throttleKeys(" Victim@Example.COM ", "a").pair).toBe(
      throttleKeys("victim@example.com", "a").pair,
    );
  });

  it("two instances spend from one budget, and 20 concurrent guesses from one source get exactly five through", async () => {
    const keys = throttleKeys("shared@example.com", "198.51.100.7");
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        takeAttempt(i % 2 ? secondInstance : t.db, keys, { ...LIMITS, perSource: 100 }),
      ),
    );
    expect(allowedCount(decisions)).toBe(5);
  });

  it("a correct password gives the pair and the account their budgets back, the source one attempt", async () => {
    const keys = throttleKeys("owner@example.com", "192.0.2.1");
    for (let i = 0; i < 4; i++) await failedGuess(keys);
    await giveBackAttempt(t.db, keys);
    expect(await row(keys.pair)).toBeNull();
    expect(await row(keys.account)).toBeNull();
    expect((await row(keys.source))?.attempts).toBe(3); // one unit back, not the whole budget
  });

  it("a window that ended starts again at one attempt", async () => {
    const keys = throttleKeys("patient@example.com", "192.0.2.2");
    for (let i = 0; i < 6; i++) await failedGuess(keys);
    expect((await takeAttempt(t.db, keys, LIMITS)).allowed).toBe(false);
    await t.db
      .$executeRaw`UPDATE "SignInThrottle" SET "windowStartedAt" = now() - interval '901 seconds' WHERE "key" IN (${keys.pair}, ${keys.source})`;
    expect((await takeAttempt(t.db, keys, LIMITS)).allowed).toBe(true);
    expect((await row(keys.pair))?.attempts).toBe(1);
  });
});

describe("per account, every source: slowed, never refused", () => {
  it("failures from many sources slow the account's next attempts (doubling, capped), and refuse none", async () => {
    const victim = "popular@example.com";
    const delays = [];
    for (let i = 0; i < 12; i++) {
      const decision = await failedGuess(throttleKeys(victim, `10.1.0.${i}`));
      expect(decision.allowed).toBe(true);
      if (decision.allowed) delays.push(decision.delayMs);
    }
    expect(delays).toEqual([0, 0, 0, 0, 0, 250, 500, 1000, 2000, 4000, 4000, 4000]);
    const fresh = await takeAttempt(t.db, throttleKeys(victim, "192.0.2.99"), LIMITS);
    expect(fresh).toMatchObject({ allowed: true, delayMs: SLOWDOWN.maxMs });
  });

  it("slowdownMs stays within its ceiling for any count", () => {
    for (const failures of [0, 4, 5, 6, 20, 1_000_000])
      expect(slowdownMs(failures, LIMITS)).toBeLessThanOrEqual(SLOWDOWN.maxMs);
  });
});

describe("per source", () => {
  it("guessing across many accounts from one source is stopped at the source's budget", async () => {
    const decisions = [];
    for (let i = 0; i < 10; i++)
      decisions.push(
        await takeAttempt(t.db, throttleKeys(`user${i}@example.com`, "203.0.113.99"), LIMITS),
      );
    expect(decisions.map((d) => d.allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      true,
      false,
      false,
    ]);
  });

  it("signing in to one's own account between guesses refills the source by one attempt only", async () => {
    const address = "203.0.113.100";
    for (let i = 0; i < 8; i++)
      await takeAttempt(t.db, throttleKeys(`guess${i}@example.com`, address), LIMITS);
    const own = throttleKeys("attacker@example.com", address);
    expect((await takeAttempt(t.db, own, LIMITS)).allowed).toBe(false);
    await giveBackAttempt(t.db, own); // even a success gives back only the attempt it took
    expect(
      (await takeAttempt(t.db, throttleKeys("guess9@example.com", address), LIMITS)).allowed,
    ).toBe(false);
  });
});

describe("forgetStaleAttempts", () => {
  it("deletes rows whose window ended, at most ten at a time, and keeps live ones", async () => {
    await t.db.$executeRaw`
      INSERT INTO "SignInThrottle" ("key", "attempts", "windowStartedAt")
      SELECT 'stale:' || i, 3, now() - interval '2 hours' FROM generate_series(1, 12) AS i`;
    const live = throttleKeys("live@example.com", "192.0.2.50");
    await takeAttempt(t.db, live, LIMITS);
    expect(await forgetStaleAttempts(t.db, LIMITS)).toBe(10);
    expect(await forgetStaleAttempts(t.db, LIMITS)).toBeGreaterThanOrEqual(2);
    expect(await t.db.signInThrottle.count({ where: { key: { startsWith: "stale:" } } })).toBe(0);
    expect(await row(live.pair)).not.toBeNull();
  });
});
