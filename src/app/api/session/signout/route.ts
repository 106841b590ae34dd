// Sign out: clears the session cookie. Refused cross-site, so another site cannot sign a visitor
// out (or, paired with a login CSRF, swap their session).
import { clearSessionCookieHeader } from "@/server/auth/session";
import { crossSiteRefusal, isCrossSiteRequest } from "@/server/http/cross-site";

export async function POST(req: Request) {
  if (isCrossSiteRequest(req.headers, req.url)) return crossSiteRefusal();
  return new Response(null, { status: 303, headers: { Location: "/signin", "Set-Cookie": clearSessionCookieHeader() } });
}
