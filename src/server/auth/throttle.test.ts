// The sign-in throttle against a real PostgreSQL: budgets per account and per address, shared
// between two app instances (two pools), atomic under concurrent guesses, and a window that ends.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createDb, type Db } from "../db/client";
import { forgetStaleAttempts, giveBackAttempt, takeAttempt, throttleKeys, type ThrottleLimits } from "./throttle";

const t = useTestDatabase({ poolMax: 10 });
const LIMITS: ThrottleLimits = { perAccount: 5, perAddress: 8, windowSeconds: 900 };

let secondInstance: Db;
beforeAll(() => {
  secondInstance = createDb(t.url, { max: 10 });
});
afterAll(async () => {
  await secondInstance?.$disconnect();
});

const allowedCount = (decisions: { allowed: boolean }[]) => decisions.filter((d) => d.allowed).length;

async function row(key: string) {
  return t.db.signInThrottle.findUnique({ where: { key } });
}

describe("per account", () => {
  it("five attempts pass, the sixth is refused with the time left in the window", async () => {
    const keys = throttleKeys("victim@example.com", "203.0.113.1");
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await takeAttempt(t.db, keys, LIMITS));
    expect(allowedCount(first)).toBe(5);
    const sixth = await takeAttempt(t.db, keys, LIMITS);
    expect(sixth.allowed).toBe(false);
    if (!sixth.allowed) expect(sixth.retryAfterSeconds).toBeGreaterThan(890);
    if (!sixth.allowed) expect(sixth.retryAfterSeconds).toBeLessThanOrEqual(900);
    expect((await row("account:victim@example.com"))?.attempts).toBe(6);
  });

  it("the e-mail address is one account whatever its case or spaces", async () => {
    expect(throttleKeys(" Victim@Example.COM ", "a").account).toBe(throttleKeys("victim@example.com", "b").account);
  });

  it("two instances spend from one budget, and 20 concurrent guesses get exactly five through", async () => {
    const keys = throttleKeys("shared@example.com", "198.51.100.7");
    const decisions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => takeAttempt(i % 2 ? secondInstance : t.db, { ...keys, address: `address:10.0.0.${i}` }, LIMITS)),
    );
    expect(allowedCount(decisions)).toBe(5);
  });

  it("a correct password gives the account its budget back", async () => {
    const keys = throttleKeys("owner@example.com", "192.0.2.1");
    for (let i = 0; i < 4; i++) await takeAttempt(t.db, keys, LIMITS);
    await giveBackAttempt(t.db, keys);
    expect(await row(keys.account)).toBeNull();
    expect((await row(keys.address))?.attempts).toBe(3); // one unit back, not the whole budget
  });

  it("a window that ended starts again at one attempt", async () => {
    const keys = throttleKeys("patient@example.com", "192.0.2.2");
    for (let i = 0; i < 6; i++) await takeAttempt(t.db, keys, LIMITS);
    expect((await takeAttempt(t.db, keys, LIMITS)).allowed).toBe(false);
    await t.db.$executeRaw`UPDATE "SignInThrottle" SET "windowStartedAt" = now() - interval '901 seconds' WHERE "key" = ${keys.account}`;
    expect((await takeAttempt(t.db, keys, LIMITS)).allowed).toBe(true);
    expect((await row(keys.account))?.attempts).toBe(1);
  });
});

describe("per address", () => {
  it("guessing across many accounts from one address is stopped at the address's budget", async () => {
    const decisions = [];
    for (let i = 0; i < 10; i++) decisions.push(await takeAttempt(t.db, throttleKeys(`user${i}@example.com`, "203.0.113.99"), LIMITS));
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, true, true, true, true, true, false, false]);
  });

  it("signing in to one's own account between guesses refills the address by one attempt only", async () => {
    const address = "203.0.113.100";
    for (let i = 0; i < 8; i++) await takeAttempt(t.db, throttleKeys(`guess${i}@example.com`, address), LIMITS);
    const own = throttleKeys("attacker@example.com", address);
    expect((await takeAttempt(t.db, own, LIMITS)).allowed).toBe(false);
    await giveBackAttempt(t.db, own); // even a success gives back only the attempt it took
    expect((await takeAttempt(t.db, throttleKeys("guess9@example.com", address), LIMITS)).allowed).toBe(false);
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
    expect(await row(live.account)).not.toBeNull();
  });
});
