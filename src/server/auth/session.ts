// The browser's session: a row in "Session", named by a random token in an HttpOnly cookie (only
// its SHA-256 is stored: a leaked table opens no session). Being a row, it ends when the server
// says (sign-out, a new password, revoke-sessions, the operator), and `expiresAt` is checked on
// every request (the cookie's Max-Age is only a courtesy to the browser).
import { randomBytes } from "node:crypto";
import type { Db } from "../db/client";
import { hashToken } from "./token";

export const SESSION_COOKIE = "once_session";

/**
 * How long a session lives from sign-in, whatever happens: a copied cookie stops working by then.
 * An operator's session holds the dashboard's bust and release, so it lasts a working day (OWASP's
 * session guidance: a few hours for high-value sessions); a shopper's a week.
 */
export const SESSION_LIFETIME_SECONDS = { ADMIN: 12 * 3600, TENANT: 7 * 24 * 3600 } as const;

/** 32 random bytes, base64url: what the cookie holds. Anything else is not worth a query. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Expired sessions removed whenever one is made: the table stays as small as the live ones. */
const FORGET_BATCH = 10;

/** `value`: what the cookie holds. */
type NewSession = { value: string; maxAgeSeconds: number };

/** Makes a session for the user; the value goes into the cookie and nowhere else. */
export async function createSession(
  db: Db,
  user: { id: string; role: "TENANT" | "ADMIN" },
  userAgent?: string | null,
): Promise<NewSession> {
  const value = randomBytes(32).toString("base64url");
  const maxAgeSeconds = SESSION_LIFETIME_SECONDS[user.role];
  await db.$executeRaw`
    INSERT INTO "Session" ("tokenHash", "userId", "userAgent", "expiresAt")
    VALUES (${hashToken(value)}, ${user.id}::uuid, ${userAgent?.slice(0, 200) ?? null}, now() + make_interval(secs => ${maxAgeSeconds}))`;
  await db.$executeRaw`
    DELETE FROM "Session" WHERE "id" IN (
      SELECT "id" FROM "Session" WHERE "expiresAt" < now() ORDER BY "expiresAt" LIMIT ${FORGET_BATCH} FOR UPDATE SKIP LOCKED)`;
  return { value, maxAgeSeconds };
}

/** The stored hash of a well-formed cookie value; null for anything else (no query needed). */
export function sessionTokenHash(value: string | undefined): string | null {
  return value && TOKEN.test(value) ? hashToken(value) : null;
}

/** Sign-out: the session named by the cookie ends. Whether there was one. */
export async function endSession(db: Db, value: string | undefined): Promise<boolean> {
  const hash = sessionTokenHash(value);
  if (!hash) return false;
  return (await db.session.deleteMany({ where: { tokenHash: hash } })).count > 0;
}

/** Every session of the account ends (a new password, revoke-sessions). How many there were. */
export async function endSessionsOf(db: Db, userId: string): Promise<number> {
  return (await db.session.deleteMany({ where: { userId } })).count;
}

export function sessionCookieHeader(session: NewSession, secure: boolean): string {
  const cookie = `${SESSION_COOKIE}=${session.value}; Path=/; HttpOnly; SameSite=Lax`;
  return `${cookie}; Max-Age=${session.maxAgeSeconds}${secure ? "; Secure" : ""}`;
}

export const clearSessionCookieHeader = () =>
  sessionCookieHeader({ value: "", maxAgeSeconds: 0 }, false);

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}
