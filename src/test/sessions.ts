// Sessions for tests: a real row made by the real code (createSession), and the user a
// response's Set-Cookie signed in, read back from the database.
import type { Db } from "../server/db/client";
import {
  createSession,
  readCookie,
  SESSION_COOKIE,
  sessionTokenHash,
} from "../server/auth/session";

/** A new session of the user; its cookie's value. */
export async function sessionValueFor(db: Db, userId: string): Promise<string> {
  const user = await db.user.findUniqueOrThrow({
    where: { id: userId },
    select: { id: true, role: true },
  });
  return (await createSession(db, user)).value;
}

/** `once_session=<value>` for a new session of the user. */
export async function sessionCookieFor(db: Db, userId: string): Promise<string> {
  return `${SESSION_COOKIE}=${await sessionValueFor(db, userId)}`;
}

/** The user whose live session a `Set-Cookie` header names, or null. */
export async function sessionUserOf(db: Db, setCookie: string | null): Promise<string | null> {
  const hash = sessionTokenHash(
    setCookie ? readCookie(setCookie.split(";")[0]!, SESSION_COOKIE) : undefined,
  );
  if (!hash) return null;
  const row = await db.session.findUnique({
    where: { tokenHash: hash },
    select: { userId: true, expiresAt: true },
  });
  return row && row.expiresAt > new Date() ? row.userId : null;
}
