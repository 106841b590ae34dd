// Telling a cross-site request from our own pages: Sec-Fetch-Site first, Origin without it,
// neither header = not a browser.
import { describe, expect, it } from "vitest";
import { isCrossSiteRequest } from "./cross-site";

const URL_ = "http://127.0.0.1:3000/api/session/signin";
const headers = (h: Record<string, string>) => new Headers({ host: "127.0.0.1:3000", ...h });

describe("isCrossSiteRequest", () => {
  it.each([
    [{ "sec-fetch-site": "cross-site" }, true],
    [{ "sec-fetch-site": "same-site" }, true], // a sibling subdomain is someone else's page too
    [{ "sec-fetch-site": "same-origin" }, false],
    [{ "sec-fetch-site": "none" }, false], // typed in, a bookmark
    [{ "sec-fetch-site": "same-origin", origin: "http://evil.example" }, false], // the browser's own word wins
    [{ origin: "http://evil.example" }, true],
    [{ origin: "http://127.0.0.1:3001" }, true], // another port is another origin
    [{ origin: "null" }, true], // sandboxed frames, privacy redirects
    [{ origin: "http://127.0.0.1:3000" }, false],
    [{}, false], // curl, a server: cannot carry a victim's cookie
  ])("%j → %s", (h, crossSite) => {
    expect(isCrossSiteRequest(headers(h), URL_, 0)).toBe(crossSite);
  });

  it("behind a trusted proxy, compares with the host the client addressed (X-Forwarded-Host)", () => {
    const proxied = new Headers({
      host: "10.0.0.5:3000",
      "x-forwarded-host": "shop.example",
      origin: "https://shop.example",
    });
    expect(isCrossSiteRequest(proxied, "http://10.0.0.5:3000/api/session/signin", 1)).toBe(false);
    proxied.set("origin", "https://evil.example");
    expect(isCrossSiteRequest(proxied, "http://10.0.0.5:3000/api/session/signin", 1)).toBe(true);
  });

  it("without TRUSTED_PROXIES, X-Forwarded-Host is the client's word and is ignored: Host decides", () => {
    const forged = headers({ "x-forwarded-host": "evil.example", origin: "https://evil.example" });
    expect(isCrossSiteRequest(forged, URL_, 0)).toBe(true);
    forged.set("origin", "http://127.0.0.1:3000");
    expect(isCrossSiteRequest(forged, URL_, 0)).toBe(false);
  });
});
