// The browser's session cookie: HMAC-signed "<userId>.<expiresAt>.<signature>", checked without a
// database. Times are literal epoch milliseconds, never derived from the code under test.
import { afterEach, describe, expect, it } from "vitest";
import {
  clearSessionCookieHeader,
  createSessionValue,
  readCookie,
  readSessionValue,
  SESSION_COOKIE,
  SESSION_MAX_AGE_SECONDS,
  sessionCookieHeader,
  setSessionSecret,
} from "./session";
import { TEST_SESSION_SECRET } from "../../test/setup";

const USER = "3f1c2a4e-8b9d-4c2e-9f00-0123456789ab";
const NOW = Date.UTC(2026, 10, 22, 12, 0, 0); // 2026-11-22T12:00:00Z
const WEEK_MS = 7 * 24 * 3600 * 1000;
const secret = TEST_SESSION_SECRET;

afterEach(() => {
  setSessionSecret(secret);
});

describe("sign and verify", () => {
  it("a fresh session reads back as its user id", () => {
    const value = createSessionValue(USER, NOW);
    expect(value.split(".")).toHaveLength(3);
    expect(value.startsWith(`${USER}.${NOW / 1000 + SESSION_MAX_AGE_SECONDS}.`)).toBe(true);
    expect(readSessionValue(value, NOW)).toBe(USER);
  });

  it("lasts a week", () => {
    expect(SESSION_MAX_AGE_SECONDS).toBe(WEEK_MS / 1000);
    const value = createSessionValue(USER, NOW);
    expect(readSessionValue(value, NOW + WEEK_MS)).toBe(USER); // the last valid instant
    expect(readSessionValue(value, NOW + WEEK_MS + 1000)).toBeNull();
  });

  it("no value, or not three parts, is no session", () => {
    expect(readSessionValue(undefined, NOW)).toBeNull();
    expect(readSessionValue("", NOW)).toBeNull();
    expect(readSessionValue(USER, NOW)).toBeNull();
    expect(readSessionValue(`${createSessionValue(USER, NOW)}.extra`, NOW)).toBeNull();
  });
});

describe("tampering", () => {
  const value = createSessionValue(USER, NOW);
  const [user, expires, signature] = value.split(".") as [string, string, string];

  it("another user id under the same signature is refused", () => {
    expect(readSessionValue(`4f1c2a4e-8b9d-4c2e-9f00-0123456789ab.${expires}.${signature}`, NOW)).toBeNull();
  });

  it("a later expiry under the same signature is refused", () => {
    expect(readSessionValue(`${user}.${Number(expires) + 3600}.${signature}`, NOW)).toBeNull();
  });

  it("a changed, shortened or empty signature is refused", () => {
    const flipped = (signature[0] === "A" ? "B" : "A") + signature.slice(1);
    expect(readSessionValue(`${user}.${expires}.${flipped}`, NOW)).toBeNull();
    expect(readSessionValue(`${user}.${expires}.${signature.slice(1)}`, NOW)).toBeNull();
    expect(readSessionValue(`${user}.${expires}.`, NOW)).toBeNull();
  });

  it("a value signed with another secret is refused", () => {
    setSessionSecret("another-secret-0123456789abcdef");
    const forged = createSessionValue(USER, NOW);
    setSessionSecret(secret);
    expect(readSessionValue(forged, NOW)).toBeNull();
  });

  it("without a secret of at least 16 characters nothing is signed", () => {
    setSessionSecret("short");
    expect(() => createSessionValue(USER, NOW)).toThrow(/SESSION_SECRET is not set/);
    setSessionSecret(undefined);
    expect(() => readSessionValue(value, NOW)).toThrow(/SESSION_SECRET is not set/);
  });
});

describe("the cookie", () => {
  it("is HttpOnly, SameSite=Lax, site-wide, a week long, and Secure only over HTTPS", () => {
    expect(sessionCookieHeader("v", false)).toBe(`${SESSION_COOKIE}=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800`);
    expect(sessionCookieHeader("v", true)).toBe(`${SESSION_COOKIE}=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure`);
    expect(clearSessionCookieHeader()).toBe(`${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
  });

  it("is found among other cookies, with '=' in its value kept", () => {
    expect(readCookie(`a=1; ${SESSION_COOKIE}=x.y=z; b=2`, SESSION_COOKIE)).toBe("x.y=z");
    expect(readCookie(`${SESSION_COOKIE}_old=1`, SESSION_COOKIE)).toBeUndefined();
    expect(readCookie(null, SESSION_COOKIE)).toBeUndefined();
  });
});
