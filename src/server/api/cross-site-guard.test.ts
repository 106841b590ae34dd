// The tRPC endpoint refuses a cross-site POST riding on the session cookie, in tRPC's error shape,
// through the real route handler; bearer-token callers and our own pages pass.
import { describe, expect, it } from "vitest";
import { POST as trpcPost } from "../../app/api/trpc/[trpc]/route";
import { useTestDatabase } from "@/test/database";
import { handleSignOut } from "../auth/sign-out";
import { SESSION_COOKIE } from "../auth/session";
import { refuseCrossSiteMutation } from "./cross-site-guard";

const t = useTestDatabase({ poolMax: 2 });
const signOut = (req: Request) => handleSignOut(req, t.db);

const URL_ = "http://127.0.0.1:3000/api/trpc/checkout.placeOrder";
const SESSION = `${SESSION_COOKIE}=${"S".repeat(43)}`; // the guard looks at the cookie being sent, not at its session

function post(headers: Record<string, string>, url = URL_): Request {
  return new Request(url, {
    method: "POST",
    headers: { host: "127.0.0.1:3000", "content-type": "application/json", "idempotency-key": "k1", ...headers },
    body: JSON.stringify({ items: [] }),
  });
}

describe("a cross-site mutation with the session cookie", () => {
  it.each<Record<string, string>>([{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { origin: "https://evil.example" }])(
    "%j is 403 cross_site_request in tRPC's shape, before tRPC runs",
    async (headers) => {
      const res = await trpcPost(post({ cookie: SESSION, ...headers }));
      expect(res.status).toBe(403);
      expect(await res.json()).toEqual({
        error: {
          message: expect.stringContaining("Cross-site request refused"),
          code: -32003,
          data: { code: "FORBIDDEN", httpStatus: 403, reason: "cross_site_request", docs: "/docs/errors#cross_site_request" },
        },
      });
      expect(res.headers.get("link")).toBe('</docs/errors#cross_site_request>; rel="describedby"');
    },
  );
});

describe("what passes the guard", () => {
  it("a bearer-token call without the cookie, even with a foreign Origin", () => {
    expect(refuseCrossSiteMutation(post({ authorization: "Bearer x", origin: "https://evil.example" }))).toBeNull();
  });
  it("our own page's post with the cookie", () => {
    expect(refuseCrossSiteMutation(post({ cookie: SESSION, "sec-fetch-site": "same-origin" }))).toBeNull();
  });
  it("a cross-site GET (a query: it changes nothing, and CORS keeps the answer from the other site)", () => {
    const get = new Request(URL_, { headers: { cookie: SESSION, "sec-fetch-site": "cross-site" } });
    expect(refuseCrossSiteMutation(get)).toBeNull();
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
