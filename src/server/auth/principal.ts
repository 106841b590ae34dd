// Who is calling: from `Authorization: Bearer <token>` (API callers) or the session cookie
// (browser). The tenant always comes from here, never from a request body.
import type { Db } from "../db/client";
import { readCookie, readSessionValue, SESSION_COOKIE } from "./session";
import { hashToken } from "./token";

export interface Principal {
  userId: string;
  name: string;
  email: string;
  role: "TENANT" | "ADMIN";
  /** The tenant a TENANT acts for; null for the admin. */
  tenantId: string | null;
}

const userSelect = { id: true, name: true, email: true, role: true, tenantId: true } as const;

function toPrincipal(u: { id: string; name: string; email: string; role: "TENANT" | "ADMIN"; tenantId: string | null }): Principal {
  return { userId: u.id, name: u.name, email: u.email, role: u.role, tenantId: u.tenantId };
}

export async function principalFromHeaders(db: Db, headers: Headers): Promise<Principal | null> {
  const authorization = headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    if (!match) return null;
    const token = await db.apiToken.findUnique({
      where: { tokenHash: hashToken(match[1]!) },
      select: { user: { select: userSelect } },
    });
    return token ? toPrincipal(token.user) : null;
  }
  const userId = readSessionValue(readCookie(headers.get("cookie"), SESSION_COOKIE));
  if (!userId) return null;
  const user = await db.user.findUnique({ where: { id: userId }, select: userSelect }).catch(() => null);
  return user ? toPrincipal(user) : null;
}
