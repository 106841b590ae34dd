// The tRPC endpoint's cross-site door: a POST (every mutation) that carries the session cookie
// must come from this site's own pages (src/http/cross-site.ts says how that is told).
// Checked before tRPC runs, so nothing is reserved or executed; the refusal has tRPC's error
// shape, so clients read `error.data.reason` as for every other error. A bearer-token caller
// without the cookie is not a browser riding on a session, and passes.
import { AppError } from "@/shared/app-error";
import { readCookie, SESSION_COOKIE } from "../auth/session";
import { CROSS_SITE_MESSAGE, CROSS_SITE_REASON, isCrossSiteRequest } from "../../http/cross-site";
import { fromAppError, trpcErrorResponse } from "./errors";

/** `trustedProxies`: TRUSTED_PROXIES (whose X-Forwarded-Host is believed; 0: nobody's). */
export function refuseCrossSiteMutation(req: Request, trustedProxies: number): Response | null {
  if (req.method !== "POST") return null;
  if (readCookie(req.headers.get("cookie"), SESSION_COOKIE) === undefined) return null;
  if (!isCrossSiteRequest(req.headers, req.url, trustedProxies)) return null;
  return trpcErrorResponse(fromAppError(new AppError(CROSS_SITE_REASON, CROSS_SITE_MESSAGE)));
}
