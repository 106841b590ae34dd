// POST /api/session/signin attacked as an attacker would, against a real database seeded in demo
// mode (so the demo rows are there to be abused): without demo mode they open nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createUser } from "./accounts";
import { sessionUserOf } from "../../test/sessions";
import { handleSignIn, type SignInDeps } from "./sign-in";

const t = useTestDatabase({ poolMax: 4 });
const ORIGIN = "http://127.0.0.1:3000";
const PASSWORD = "a long enough password";
const LIMITS = { perAccount: 3, perAddress: 100, windowSeconds: 900 };

let operatorId: string;
beforeAll(async () => {
  operatorId = (await createUser(t.db, { email: "ops@example.com", name: "Ops", role: "ADMIN", password: PASSWORD })).id;
});

const deps = (demo: boolean): SignInDeps => ({ db: t.db, demo, limits: LIMITS });

function form(fields: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}/api/session/signin`, {
    method: "POST",
    headers: { host: "127.0.0.1:3000", "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** The user a response signed in, or null (no cookie, or not a live session). */
function signedInAs(res: Response): Promise<string | null> {
  return sessionUserOf(t.db, res.headers.get("set-cookie"));
}

async function body(res: Response) {
  return (await res.json()) as { error: string; reason: string };
}

describe("without demo mode (production)", () => {
  it.each(["admin@example.com", "acme@example.com", "globex@example.com"])("%s without a password is refused, no cookie", async (email) => {
    const res = await handleSignIn(form({ email }), deps(false));
    expect(res.status).toBe(400);
    expect(await body(res)).toMatchObject({ reason: "password_required" });
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("a demo account with any password is refused: it has none, and demo rows are nobody", async () => {
    const res = await handleSignIn(form({ email: "admin@example.com", password: "" }), deps(false));
    expect(res.status).toBe(401);
    expect(await signedInAs(res)).toBeNull();
  });

  it("the right password signs in (an admin lands on /admin); a wrong one is 401 without a cookie", async () => {
    const ok = await handleSignIn(form({ email: "OPS@example.com", password: PASSWORD }), deps(false));
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/admin");
    expect(await signedInAs(ok)).toBe(operatorId);
    const wrong = await handleSignIn(form({ email: "ops@example.com", password: `${PASSWORD}!` }), deps(false));
    expect(wrong.status).toBe(401);
    expect(await body(wrong)).toMatchObject({ reason: "invalid_credentials" });
    expect(wrong.headers.get("set-cookie")).toBeNull();
  });

  it("the cookie is HttpOnly, SameSite=Lax, and Secure when a TLS proxy forwarded the request", async () => {
    const plain = await handleSignIn(form({ email: "ops@example.com", password: PASSWORD }), deps(false));
    expect(plain.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const proxied = await handleSignIn(form({ email: "ops@example.com", password: PASSWORD }, { "x-forwarded-proto": "https" }), deps(false));
    expect(proxied.headers.get("set-cookie")).toMatch(/; Secure$/);
  });

  it("an unknown account reads exactly like a wrong password", async () => {
    const res = await handleSignIn(form({ email: "nobody@example.com", password: PASSWORD }), deps(false));
    expect(res.status).toBe(401);
    expect(await body(res)).toEqual({ error: "Wrong e-mail address or password", reason: "invalid_credentials", docs: "/docs/errors#invalid_credentials" });
    expect(res.headers.get("link")).toBe('</docs/errors#invalid_credentials>; rel="describedby"');
  });
});

describe("throttle", () => {
  it("after the account's budget: 429 with Retry-After, and even the right password waits", async () => {
    await createUser(t.db, { email: "target@example.com", name: "Target", role: "ADMIN", password: PASSWORD });
    const guess = (password: string) => handleSignIn(form({ email: "target@example.com", password }), deps(false));
    for (let i = 0; i < 3; i++) expect((await guess(`guess number ${i}`)).status).toBe(401);
    const throttled = await guess("guess number 4");
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await body(throttled)).toMatchObject({ reason: "too_many_attempts" });
    const right = await guess(PASSWORD);
    expect(right.status).toBe(429);
    expect(await signedInAs(right)).toBeNull();
  });

  it("a person's browser is sent back to the form with the reason (and the wait)", async () => {
    await createUser(t.db, { email: "person@example.com", name: "Person", role: "ADMIN", password: PASSWORD });
    const res = await handleSignIn(
      form({ email: "person@example.com", password: "not my password", next: "/orders" }, { "sec-fetch-mode": "navigate", "sec-fetch-site": "same-origin" }),
      deps(false),
    );
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/signin?error=invalid_credentials&next=%2Forders");
  });
});

describe("demo mode", () => {
  it("a demo account signs in with one click", async () => {
    const res = await handleSignIn(form({ email: "acme@example.com", next: "/cart" }), deps(true));
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/cart");
    const acme = await t.db.user.findUniqueOrThrow({ where: { email: "acme@example.com" } });
    expect(await signedInAs(res)).toBe(acme.id);
  });

  it("one click never opens a real account, even in demo mode", async () => {
    const res = await handleSignIn(form({ email: "ops@example.com" }), deps(true));
    expect(res.status).toBe(400);
    expect(await body(res)).toMatchObject({ reason: "not_a_demo_account" });
    expect(res.headers.get("set-cookie")).toBeNull();
  });
});

describe("next stays on this site", () => {
  it.each(["/\\evil.example", "/\t/evil.example", "/%09/evil.example", "//evil.example", "https://evil.example", "/\\/evil.example"])(
    "next=%j redirects to a path here",
    async (next) => {
      const res = await handleSignIn(form({ email: "acme@example.com", next }), deps(true));
      expect(res.status).toBe(303);
      const location = res.headers.get("location")!;
      expect(new URL(location, ORIGIN).origin).toBe(ORIGIN);
      expect(location).toBe("/");
    },
  );

  it("the urlencoded body %09 (a tab once decoded) and %2509 (a literal %09) both stay here", async () => {
    for (const raw of ["email=acme%40example.com&next=%2F%09%2Fevil.example", "email=acme%40example.com&next=%2F%2509%2Fevil.example"]) {
      const req = new Request(`${ORIGIN}/api/session/signin`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: raw,
      });
      const res = await handleSignIn(req, deps(true));
      expect(new URL(res.headers.get("location")!, ORIGIN).origin).toBe(ORIGIN);
    }
  });
});

describe("cross-site posts (login CSRF)", () => {
  it.each<Record<string, string>>([
    { "sec-fetch-site": "cross-site" },
    { "sec-fetch-site": "same-site" },
    { origin: "http://evil.example" },
    { origin: "null" },
  ])("%j is 403 cross_site_request and signs nobody in", async (headers) => {
    const res = await handleSignIn(form({ email: "ops@example.com", password: PASSWORD }, headers), deps(false));
    expect(res.status).toBe(403);
    expect(await body(res)).toMatchObject({ reason: "cross_site_request" });
    expect(res.headers.get("set-cookie")).toBeNull();
  });

  it("our own page's post (same-origin) signs in", async () => {
    const res = await handleSignIn(form({ email: "ops@example.com", password: PASSWORD }, { "sec-fetch-site": "same-origin", origin: ORIGIN }), deps(false));
    expect(await signedInAs(res)).toBe(operatorId);
  });
});

describe("only a form", () => {
  it.each([
    ["application/json", JSON.stringify({ email: "admin@example.com" })],
    ["text/plain", "email=admin@example.com"],
    ["", "email=admin@example.com"],
  ])("Content-Type %j is 415 with a reason, never 500", async (type, payload) => {
    const req = new Request(`${ORIGIN}/api/session/signin`, { method: "POST", headers: type ? { "content-type": type } : {}, body: payload });
    const res = await handleSignIn(req, deps(true));
    expect(res.status).toBe(415);
    expect(await body(res)).toMatchObject({ reason: "unsupported_media_type" });
  });

  it("a broken multipart body or a repeated field is 400 invalid_form", async () => {
    const broken = new Request(`${ORIGIN}/api/session/signin`, {
      method: "POST",
      headers: { "content-type": "multipart/form-data; boundary=x" },
      body: "--x\r\nnot a part",
    });
    expect((await handleSignIn(broken, deps(true))).status).toBe(400);
    const repeated = new Request(`${ORIGIN}/api/session/signin`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "email=acme%40example.com&email=admin%40example.com",
    });
    const res = await handleSignIn(repeated, deps(true));
    expect(res.status).toBe(400);
    expect(await body(res)).toMatchObject({ reason: "invalid_form" });
  });

  it("multipart, as a browser may send it, works", async () => {
    const data = new FormData();
    data.set("email", "ops@example.com");
    data.set("password", PASSWORD);
    const res = await handleSignIn(new Request(`${ORIGIN}/api/session/signin`, { method: "POST", body: data }), deps(false));
    expect(await signedInAs(res)).toBe(operatorId);
  });
});
