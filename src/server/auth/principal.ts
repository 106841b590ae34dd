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

export interface PrincipalOptions {
  /** Whether demo accounts and tokens are honoured (the server's DEMO_MODE, parsed at start-up). */
  demo: boolean;
}

type TokenUser = {
  id: string;
  name: string;
  email: string;
  role: "TENANT" | "ADMIN";
  tenantId: string | null;
};

/** Whose idempotency keys a caller's are: its tenant's, or "admin" for operators. */
export function keyScopeOf(principal: Principal): string {
  return principal.tenantId ?? "admin";
}

function toPrincipal(u: {
  id: string;
  name: string;
  email: string;
  role: "TENANT" | "ADMIN";
  tenantId: string | null;
}): Principal {
  return { userId: u.id, name: u.name, email: u.email, role: u.role, tenantId: u.tenantId };
}

export async function principalFromHeaders(
  db: Db,
  headers: Headers,
  options: PrincipalOptions,
): Promise<Principal | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) return null;
    // One indexed join, one round trip: this runs before every API call, so it goes straight to
    // the pg pool under Prisma's adapter when there is one (as the engine's reservation does):
    // Prisma's per-statement CPU would otherwise be most of an API retry's cost (npm run bench).
    const query = Prisma.sql`
      SELECT u."id", u."name", u."email", u."role"::text AS "role", u."tenantId"
      FROM "ApiToken" t JOIN "User" u ON u."id" = t."userId"
      WHERE t."tokenHash" = ${hashToken(match[1]!)} AND (${options.demo} OR NOT (t."demo" OR u."demo"))`;
    const rows =
      (await readOnPool<TokenUser>(db, "app_principal_by_token", query.text, query.values)) ??
      (await db.$queryRaw<TokenUser[]>(query));
    return rows[0] ? toPrincipal(rows[0]) : null;
  }
  // A value that is not a session token cannot name a session: no query. Database errors are not
  // caught here: isAuthed turns them into 503, not a silent 401.
  const hash = sessionTokenHash(readCookie(headers.get("cookie"), SESSION_COOKIE));
  if (!hash) return null;
  // The session's expiry is judged by the database's clock, on every request.
  const rows = await db.$queryRaw<TokenUser[]>`
    SELECT u."id", u."name", u."email", u."role"::text AS "role", u."tenantId"
    FROM "Session" s JOIN "User" u ON u."id" = s."userId"
    WHERE s."tokenHash" = ${hash} AND s."expiresAt" > now() AND (${options.demo} OR NOT u."demo")`;
  return rows[0] ? toPrincipal(rows[0]) : null;
}
