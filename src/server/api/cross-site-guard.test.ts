// The tRPC endpoint refuses a cross-site POST riding on the session cookie, in tRPC's error shape,
// through the route's own handler; bearer-token callers and our own pages pass. A page that names
// this site in X-Forwarded-Host is believed only from a proxy TRUSTED_PROXIES vouches for.
import { describe, expect, it } from "vitest";
import { crossSiteRefusal } from "@/test/cross-site";
import { useTestDatabase } from "@/test/database";
import { testApp, testAppWith } from "@/test/app";
import { handleSignIn } from "../auth/sign-in";
import { handleSignOut } from "../auth/sign-out";
import { SESSION_COOKIE } from "../auth/session";
import { refuseCrossSiteMutation } from "./cross-site-guard";
import { serveTrpc } from "./handler";

const t = useTestDatabase({ poolMax: 2 });
const signOut = (req: Request, trustedProxies = 0) =>
  handleSignOut(req, { db: t.db, trustedProxies });
const trpcPost = (req: Request, trustedProxies = 0) =>
  serveTrpc(
    req,
    trustedProxies ? testAppWith(t.db, { TRUSTED_PROXIES: String(trustedProxies) }) : testApp(t.db),
  );

const URL_ = "http://127.0.0.1:3000/api/trpc/checkout.placeOrder";
const SESSION = `${SESSION_COOKIE}=${"S".repeat(43)}`; // the guard looks at the cookie being sent, not at its session

function post(headers: Record<string, string>, url = URL_): Request {
  return new Request(url, {
    method: "POST",
    headers: {
      host: "127.0.0.1:3000",
      "content-type": "application/json",
      "idempotency-key": "k1",
      ...headers,
    },
    body: JSON.stringify({ items: [] }),
  });
}

describe("a cross-site mutation with the session cookie", () => {
  it.each<Record<string, string>>([
    { "sec-fetch-site": "cross-site" },
    { "sec-fetch-site": "same-site" },
    { origin: "https://evil.example" },
  ])("%j is 403 cross_site_request in tRPC's shape, before tRPC runs", async (headers) => {
    const res = await trpcPost(post({ cookie: SESSION, ...headers }));
    expect(res.status).toBe(403);
    expect(await res.json()).toEqual(
      crossSiteRefusal(expect.stringContaining("Cross-site request refused")),
    );
    expect(res.headers.get("link")).toBe('</docs/errors#cross_site_request>; rel="describedby"');
  });
});

describe("what passes the guard", () => {
  it("a bearer-token call without the cookie, even with a foreign Origin", () => {
    expect(
      refuseCrossSiteMutation(
        post({ authorization: "Bearer x", origin: "https://evil.example" }),
        0,
      ),
    ).toBeNull();
  });
  it("our own page's post with the cookie", () => {
    expect(
      refuseCrossSiteMutation(post({ cookie: SESSION, "sec-fetch-site": "same-origin" }), 0),
    ).toBeNull();
  });
  it("a cross-site GET (a query: it changes nothing, and CORS keeps the answer from the other site)", () => {
    const get = new Request(URL_, { headers: { cookie: SESSION, "sec-fetch-site": "cross-site" } });
    expect(refuseCrossSiteMutation(get, 0)).toBeNull();
  });
});

describe("sign-out", () => {
  it("cross-site is 403 and clears nothing; from our page it clears the cookie", async () => {
    const url = "http://127.0.0.1:3000/api/session/signout";
    const refused = await signOut(post({ cookie: SESSION, "sec-fetch-site": "cross-site" }, url));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ reason: "cross_site_request" });
    expect(refused.headers.get("set-cookie")).toBeNull();
    const ok = await signOut(post({ cookie: SESSION, "sec-fetch-site": "same-origin" }, url));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("set-cookie")).toContain("Max-Age=0");
  });
});

describe("a forged X-Forwarded-Host (the attacker's page claims to be this site)", () => {
  // An old browser without Sec-Fetch-Site: only Origin says where the post comes from.
  const forged = {
    cookie: SESSION,
    origin: "https://evil.example",
    "x-forwarded-host": "evil.example",
  };

  it("from a peer no TRUSTED_PROXIES vouches for, is not believed: 403 cross_site_request on tRPC, sign-out and sign-in", async () => {
    const refused = await trpcPost(post(forged));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      error: { data: { reason: "cross_site_request" } },
    });
    const out = await signOut(post(forged, "http://127.0.0.1:3000/api/session/signout"));
    expect(out.status).toBe(403);
    expect(out.headers.get("set-cookie")).toBeNull();
    const signIn = await handleSignIn(
      new Request("http://127.0.0.1:3000/api/session/signin", {
        method: "POST",
        headers: {
          host: "127.0.0.1:3000",
          "content-type": "application/x-www-form-urlencoded",
          ...forged,
        },
        body: "email=acme%40example.com",
      }),
      { db: t.db, demo: true, trustedProxies: 0 },
    );
    expect(signIn.status).toBe(403);
    expect(signIn.headers.get("set-cookie")).toBeNull();
  });

  it("behind a trusted proxy, the host that proxy wrote decides; what the client wrote before it does not", async () => {
    // The proxy appended the host the browser addressed (shop.example) after the client's forgery.
    const proxied = {
      cookie: SESSION,
      host: "10.0.0.5:3000",
      "x-forwarded-host": "evil.example, shop.example",
    };
    expect((await trpcPost(post({ ...proxied, origin: "https://evil.example" }), 1)).status).toBe(
      403,
    );
    expect(
      refuseCrossSiteMutation(post({ ...proxied, origin: "https://shop.example" }), 1),
    ).toBeNull();
  });
});
