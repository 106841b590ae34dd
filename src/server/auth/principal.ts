// Who is calling: from `Authorization: Bearer <token>` (API callers) or the session cookie
// (browser). The tenant always comes from here, never from a request body.
//
// Demo accounts and demo tokens (rows marked `demo` by the demo seed, or by migration 0003 for a
// database seeded before it) are nobody unless the server runs in demo mode: a database seeded for
// a demo and later served in production does not keep `admin_demo_token` working.
import { Prisma } from "../../generated/prisma/client";
import { readOnPool, type Db } from "../db/client";
import { readCookie, SESSION_COOKIE, sessionTokenHash } from "./session";
import { hashToken } from "./token";

export interface Principal {
  userId: string;
  name: string;
  email: string;
  role: "TENANT" | "ADMIN";
  /** The tenant a TENANT acts for; null for the admin. */
  tenantId: string | null;
}

const PRINCIPAL_COLUMNS = Prisma.sql`u."id"::text AS "userId", u."name", u."email", u."role"::text AS "role", u."tenantId"`;

/** Whose idempotency keys a caller's are: its tenant's, or "admin" for operators. */
export function keyScopeOf(principal: Principal): string {
  return principal.tenantId ?? "admin";
}

export async function principalFromHeaders(
  db: Db,
  headers: Headers,
  /** Whether demo accounts and tokens are honoured (DEMO_MODE, parsed at start-up). */
  options: { demo: boolean },
): Promise<Principal | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) return null;
    // One indexed join, one round trip: this runs before every API call, so it goes straight to
    // the pg pool under Prisma's adapter when there is one (as the engine's reservation does):
    // Prisma's per-statement CPU would otherwise be most of an API retry's cost (npm run bench).
    const query = Prisma.sql`
      SELECT ${PRINCIPAL_COLUMNS} FROM "ApiToken" t JOIN "User" u ON u."id" = t."userId"
      WHERE t."tokenHash" = ${hashToken(match[1]!)} AND (${options.demo} OR NOT (t."demo" OR u."demo"))`;
    const rows =
      (await readOnPool<Principal>(db, "app_principal_by_token", query.text, query.values)) ??
      (await db.$queryRaw<Principal[]>(query));
    return rows[0] ?? null;
  }
  // A value that is not a session token cannot name a session: no query. Database errors are not
  // caught here: isAuthed turns them into 503, not a silent 401.
  const hash = sessionTokenHash(readCookie(headers.get("cookie"), SESSION_COOKIE));
  if (!hash) return null;
  // The session's expiry is judged by the database's clock, on every request.
  const rows = await db.$queryRaw<Principal[]>`
    SELECT ${PRINCIPAL_COLUMNS} FROM "Session" s JOIN "User" u ON u."id" = s."userId"
    WHERE s."tokenHash" = ${hash} AND s."expiresAt" > now() AND (${options.demo} OR NOT u."demo")`;
  return rows[0] ?? null;
}
