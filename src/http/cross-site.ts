// Cross-site request refusal for cookie-authenticated state changes (sign-in, sign-out, tRPC
// mutations). The session cookie is SameSite=Lax, which keeps it off cross-site POSTs in current
// browsers, but not off requests from a sibling subdomain (same-site), not in older browsers, and
// not for sign-in itself: a cross-site form that signs a visitor in as the attacker (login CSRF)
// needs no cookie at all. So the request says where it comes from, and we check:
//
// - `Sec-Fetch-Site` (every current browser sends it): only `same-origin` or `none` (typed in, a
//   bookmark) pass; `same-site` and `cross-site` are refused.
// - Without it, `Origin`: it must be this site's own (host and port as the request was
//   addressed: Host, or X-Forwarded-Host only from a trusted proxy, see forwarded.ts); `Origin:
//   null` (sandboxed frames, privacy redirects) is refused.
// - Neither header: not a browser (curl, a server). It cannot carry a victim's cookie, so it
//   passes; a bearer token is its own proof.

import { Reason, reasonDocsPath } from "@/shared/reasons";
import { forwardedByProxy } from "./forwarded";
import { plainError } from "./plain-error";

export const CROSS_SITE_REASON = Reason.CROSS_SITE_REQUEST;
/** Where the reason is explained (the IETF draft's `Link: <…>; rel="describedby"`). */
export const CROSS_SITE_DOCS = reasonDocsPath(CROSS_SITE_REASON);
export const CROSS_SITE_MESSAGE =
  "Cross-site request refused: state changes must come from this site's own pages";

/**
 * The host the request was addressed to: what our outermost proxy says (X-Forwarded-Host, with
 * TRUSTED_PROXIES set), else Host, else the URL's. A client's own X-Forwarded-Host is never
 * believed: it would let a page name any host it likes as "this site".
 */
function requestHost(headers: Headers, url: string, trustedProxies: number): string {
  return (
    forwardedByProxy(headers, "x-forwarded-host", trustedProxies) ||
    headers.get("host") ||
    new URL(url).host
  ).toLowerCase();
}

/** `trustedProxies`: TRUSTED_PROXIES, how many proxies in front set X-Forwarded-Host (0: none). */
export function isCrossSiteRequest(headers: Headers, url: string, trustedProxies: number): boolean {
  const fetchSite = headers.get("sec-fetch-site")?.toLowerCase();
  if (fetchSite) return fetchSite !== "same-origin" && fetchSite !== "none";
  const origin = headers.get("origin");
  if (origin === null) return false;
  try {
    return new URL(origin).host.toLowerCase() !== requestHost(headers, url, trustedProxies);
  } catch {
    return true; // "null", or anything that is not an origin
  }
}

/** The refusal for plain routes: `{ error, reason }` with 403. */
export function crossSiteRefusal(): Response {
  return plainError(403, CROSS_SITE_REASON, CROSS_SITE_MESSAGE);
}
