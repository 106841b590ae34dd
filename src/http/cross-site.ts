// Cross-site refusal for cookie-authenticated state changes (sign-in, sign-out, tRPC mutations).
// SameSite=Lax does not cover a sibling subdomain, older browsers, or login CSRF (which needs no
// cookie), so: `Sec-Fetch-Site` must be `same-origin` or `none`; without it, `Origin` must be this
// site's own (`null` refused); with neither, not a browser: it carries no victim's cookie.
import { Reason, reasonDocsPath } from "@/shared/reasons";
import { forwardedByProxy } from "./forwarded";
import { plainError } from "./plain-error";

export const CROSS_SITE_REASON = Reason.CROSS_SITE_REQUEST;
export const CROSS_SITE_DOCS = reasonDocsPath(CROSS_SITE_REASON);
export const CROSS_SITE_MESSAGE =
  "Cross-site request refused: state changes must come from this site's own pages";

/** The host the request was addressed to; a client's own X-Forwarded-Host is never believed. */
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
