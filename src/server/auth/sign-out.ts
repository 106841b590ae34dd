// POST /api/session/signout: the session ends on the server (its row is deleted), then the cookie
// is cleared. Refused cross-site, so another site cannot sign a visitor out (or, paired with a
// login CSRF, swap their session). A database that cannot be reached is the route's 503: the
// cookie is not cleared then, so nobody believes a session ended that did not.
import type { Db } from "../db/client";
import { crossSiteRefusal, isCrossSiteRequest } from "../../http/cross-site";
import { clearSessionCookieHeader, endSession, readCookie, SESSION_COOKIE } from "./session";

/** `trustedProxies`: whose X-Forwarded-Host the cross-site check believes (0: nobody's). */
export async function handleSignOut(
  req: Request,
  { db, trustedProxies }: { db: Db; trustedProxies: number },
): Promise<Response> {
  if (isCrossSiteRequest(req.headers, req.url, trustedProxies)) return crossSiteRefusal();
  await endSession(db, readCookie(req.headers.get("cookie"), SESSION_COOKIE));
  return new Response(null, {
    status: 303,
    headers: { Location: "/signin", "Set-Cookie": clearSessionCookieHeader() },
  });
}
