// The browser's session: an HttpOnly cookie holding the user id and an expiry, signed with
// HMAC-SHA256 so it cannot be forged. Stateless on purpose: any app instance can verify it.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "once_session";
/** A week: long enough for a demo, short enough that a copied cookie stops working. */
export const SESSION_MAX_AGE_SECONDS = 7 * 24 * 3600;

// The signing secret (SESSION_SECRET, validated by the configuration), set by the composition root
// (src/server/app.ts). A global slot because a bundler may copy this module once per route.
const SLOT = Symbol.for("once.sessionSecret");
const slot = globalThis as unknown as Record<typeof SLOT, string | undefined>;

/** Sets the process's session signing secret. */
export function setSessionSecret(value: string | undefined): void {
  slot[SLOT] = value;
}

function secret(): string {
  const s = slot[SLOT];
  if (!s || s.length < 16) throw new Error("SESSION_SECRET is not set (npm run dev/start sets one)");
  return s;
}

function sign(payload: string): string {
  return createHmac("sha256", secret()).update(payload).digest("base64url");
}

export function createSessionValue(userId: string, now = Date.now()): string {
  const payload = `${userId}.${Math.floor(now / 1000) + SESSION_MAX_AGE_SECONDS}`;
  return `${payload}.${sign(payload)}`;
}

/** The user id in a valid, unexpired session value; null otherwise. */
export function readSessionValue(value: string | undefined, now = Date.now()): string | null {
  if (!value) return null;
  const parts = value.split(".");
  if (parts.length !== 3) return null;
  const [userId, expires, signature] = parts as [string, string, string];
  const expected = Buffer.from(sign(`${userId}.${expires}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return null;
  if (Number(expires) * 1000 < now) return null;
  return userId;
}

export function sessionCookieHeader(value: string, secure: boolean): string {
  return [`${SESSION_COOKIE}=${value}`, "Path=/", "HttpOnly", "SameSite=Lax", `Max-Age=${SESSION_MAX_AGE_SECONDS}`, ...(secure ? ["Secure"] : [])].join("; ");
}

export function clearSessionCookieHeader(): string {
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`;
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}
