// POST /api/session/signin attacked as an attacker would, against a real database seeded in demo
// mode (so the demo rows are there to be abused): without demo mode they open nothing.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createUser } from "./accounts";
import { sessionUserOf } from "../../test/sessions";
import { handleSignIn, type SignInDeps } from "./sign-in";
import { SIGN_IN_BODY_LIMIT_BYTES } from "../../http/body-limit";
import { countingStream } from "../../http/test-streams";

const t = useTestDatabase({ poolMax: 4 });
const ORIGIN = "http://127.0.0.1:3000";
const PASSWORD = "a long enough password";
const LIMITS = { perAccountAndSource: 3, perSource: 100, accountSlowAfter: 3, windowSeconds: 900 };
/** The slow-downs sign-in asked for, in order (recorded, not slept). */
const slowed: number[] = [];

let operatorId: string;
beforeAll(async () => {
  operatorId = (await createAdmin("ops@example.com", "Ops")).id;
});

const deps = (demo: boolean, trustedProxies = 0): SignInDeps => ({
  db: t.db,
  demo,
  limits: LIMITS,
  trustedProxies,
  sleep: async (ms) => void slowed.push(ms),
});

function form(fields: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${ORIGIN}/api/session/signin`, {
    method: "POST",
    headers: {
      host: "127.0.0.1:3000",
      "content-type": "application/x-www-form-urlencoded",
      "x-once-peer-address": "192.0.2.10",
      ...headers,
    },
    body: new URLSearchParams(fields).toString(),
  });
}

/** A sign-in post with exactly these headers and body. */
const rawPost = (headers: Record<string, string>, body: BodyInit) =>
  new Request(`${ORIGIN}/api/session/signin`, { method: "POST", headers, body });

/** The user a response signed in, or null (no cookie, or not a live session). */
function signedInAs(res: Response): Promise<string | null> {
  return sessionUserOf(t.db, res.headers.get("set-cookie"));
}

/** Posts the sign-in form with `fields` (and extra `headers`), demo mode off. */
const signIn = (
  fields: Record<string, string>,
  headers: Record<string, string> = {},
  trustedProxies = 0,
) => handleSignIn(form(fields, headers), deps(false, trustedProxies));

const createAdmin = (email: string, name: string) =>
  createUser(t.db, { email, name, role: "ADMIN", password: PASSWORD });

/** A refusal: its status and reason, and no cookie set. */
async function expectRefused(res: Response, status: number, reason: string) {
  expect(res.status).toBe(status);
  expect(await body(res)).toMatchObject({ reason });
  expect(res.headers.get("set-cookie")).toBeNull();
}

async function body(res: Response) {
  return (await res.json()) as { error: string; reason: string };
}

describe("without demo mode (production)", () => {
  it.each(["admin@example.com", "acme@example.com", "globex@example.com"])(
    "%s without a password is refused, no cookie",
    async (email) => {
      const res = await signIn({ email });
      await expectRefused(res, 400, "password_required");
    },
  );

  it("a demo account with any password is refused: it has none, and demo rows are nobody", async () => {
    const res = await signIn({ email: "admin@example.com", password: "" });
    expect(res.status).toBe(401);
    expect(await signedInAs(res)).toBeNull();
  });

  it("the right password signs in (an admin lands on /admin); a wrong one is 401 without a cookie", async () => {
    const ok = await signIn({ email: "OPS@example.com", password: PASSWORD });
    expect(ok.status).toBe(303);
    expect(ok.headers.get("location")).toBe("/admin");
    expect(await signedInAs(ok)).toBe(operatorId);
    const wrong = await signIn({ email: "ops@example.com", password: `${PASSWORD}!` });
    await expectRefused(wrong, 401, "invalid_credentials");
  });

  it("the cookie is HttpOnly, SameSite=Lax, and Secure when a TLS proxy forwarded the request", async () => {
    const plain = await signIn({ email: "ops@example.com", password: PASSWORD });
    expect(plain.headers.get("set-cookie")).toMatch(/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const proxied = await signIn(
      { email: "ops@example.com", password: PASSWORD },
      { "x-forwarded-proto": "https" },
    );
    expect(proxied.headers.get("set-cookie")).toMatch(/; Secure$/);
  });

  it("an unknown account reads exactly like a wrong password", async () => {
    const res = await signIn({ email: "nobody@example.com", password: PASSWORD });
    expect(res.status).toBe(401);
    expect(await body(res)).toEqual({
      error: "Wrong e-mail address or password",
      reason: "invalid_credentials",
      docs: "/docs/errors#invalid_credentials",
    });
    expect(res.headers.get("link")).toBe('</docs/errors#invalid_credentials>; rel="describedby"');
  });
});

describe("throttle: nobody can lock the owner out", () => {
  const from = (address: string, extra: Record<string, string> = {}) => ({
    "x-once-peer-address": address,
    ...extra,
  });

  it("wrong passwords from many addresses, then the right one from a fresh address: signed in, after at most a delay", async () => {
    await createAdmin("victim@example.com", "Victim");
    for (let i = 1; i <= 5; i++) {
      const guess = await signIn(
        { email: "victim@example.com", password: `guess number ${i}` },
        from(`203.0.113.${i}`),
      );
      expect(guess.status).toBe(401);
    }
    slowed.length = 0;
    const owner = await signIn(
      { email: "victim@example.com", password: PASSWORD },
      from("198.51.100.6"),
    );
    expect(owner.status).toBe(303);
    expect(await signedInAs(owner)).not.toBeNull();
    expect(slowed).toHaveLength(1);
    expect(slowed[0]).toBeGreaterThan(0);
    expect(slowed[0]).toBeLessThanOrEqual(4_000);
  });

  it("one address guessing one account: 429 with Retry-After for that address only", async () => {
    await createAdmin("target@example.com", "Target");
    const guess = (password: string, address: string) =>
      signIn({ email: "target@example.com", password }, from(address));
    for (let i = 0; i < 3; i++)
      expect((await guess(`guess number ${i}`, "203.0.113.50")).status).toBe(401);
    const throttled = await guess("guess number 4", "203.0.113.50");
    expect(throttled.status).toBe(429);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await body(throttled)).toMatchObject({ reason: "too_many_attempts" });
    expect((await guess(PASSWORD, "203.0.113.50")).status).toBe(429);
    const elsewhere = await guess(PASSWORD, "198.51.100.51");
    expect(elsewhere.status).toBe(303);
    expect(await signedInAs(elsewhere)).not.toBeNull();
  });

  it("rotating X-Forwarded-For buys nothing by default (TRUSTED_PROXIES=0): 35 guesses, refused from the 4th", async () => {
    await createAdmin("rotated@example.com", "Rotated");
    const statuses = [];
    for (let i = 0; i < 35; i++) {
      const headers = from("192.0.2.77", { "x-forwarded-for": `10.0.${i}.${i}` });
      statuses.push(
        (await signIn({ email: "rotated@example.com", password: `guess ${i}` }, headers)).status,
      );
    }
    expect(statuses.slice(0, 3)).toEqual([401, 401, 401]);
    expect(new Set(statuses.slice(3))).toEqual(new Set([429]));
  });

  it("behind one proxy (TRUSTED_PROXIES=1) the address the proxy appended is the source, whatever the client wrote before it", async () => {
    await createAdmin("proxied@example.com", "Proxied");
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const headers = from("127.0.0.1", { "x-forwarded-for": `10.9.${i}.${i}, 203.0.113.200` });
      statuses.push(
        (await signIn({ email: "proxied@example.com", password: `guess ${i}` }, headers, 1)).status,
      );
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429]);
    const otherClient = from("127.0.0.1", { "x-forwarded-for": "198.51.100.201" });
    expect(
      (await signIn({ email: "proxied@example.com", password: PASSWORD }, otherClient, 1)).status,
    ).toBe(303);
  });

  it("a person's browser is sent back to the form with the reason (and the wait)", async () => {
    await createAdmin("person@example.com", "Person");
    const res = await signIn(
      { email: "person@example.com", password: "not my password", next: "/orders" },
      { "sec-fetch-mode": "navigate", "sec-fetch-site": "same-origin" },
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
    await expectRefused(res, 400, "not_a_demo_account");
  });
});

describe("next stays on this site", () => {
  it.each([
    "/\\evil.example",
    "/\t/evil.example",
    "/%09/evil.example",
    "//evil.example",
    "https://evil.example",
    "/\\/evil.example",
  ])("next=%j redirects to a path here", async (next) => {
    const res = await handleSignIn(form({ email: "acme@example.com", next }), deps(true));
    expect(res.status).toBe(303);
    const location = res.headers.get("location")!;
    expect(new URL(location, ORIGIN).origin).toBe(ORIGIN);
    expect(location).toBe("/");
  });

  it("the urlencoded body %09 (a tab once decoded) and %2509 (a literal %09) both stay here", async () => {
    for (const raw of [
      "email=acme%40example.com&next=%2F%09%2Fevil.example",
      "email=acme%40example.com&next=%2F%2509%2Fevil.example",
    ]) {
      const req = rawPost({ "content-type": "application/x-www-form-urlencoded" }, raw);
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
    const res = await signIn({ email: "ops@example.com", password: PASSWORD }, headers);
    await expectRefused(res, 403, "cross_site_request");
  });

  it("our own page's post (same-origin) signs in", async () => {
    const res = await signIn(
      { email: "ops@example.com", password: PASSWORD },
      { "sec-fetch-site": "same-origin", origin: ORIGIN },
    );
    expect(await signedInAs(res)).toBe(operatorId);
  });
});

describe("only a form", () => {
  it.each([
    ["application/json", JSON.stringify({ email: "admin@example.com" })],
    ["text/plain", "email=admin@example.com"],
    ["", "email=admin@example.com"],
  ])("Content-Type %j is 415 with a reason, never 500", async (type, payload) => {
    const req = rawPost(type ? { "content-type": type } : {}, payload);
    const res = await handleSignIn(req, deps(true));
    expect(res.status).toBe(415);
    expect(await body(res)).toMatchObject({ reason: "unsupported_media_type" });
  });

  it("a broken multipart body or a repeated field is 400 invalid_form", async () => {
    const broken = rawPost(
      { "content-type": "multipart/form-data; boundary=x" },
      "--x\r\nnot a part",
    );
    expect((await handleSignIn(broken, deps(true))).status).toBe(400);
    const repeated = rawPost(
      { "content-type": "application/x-www-form-urlencoded" },
      "email=acme%40example.com&email=admin%40example.com",
    );
    const res = await handleSignIn(repeated, deps(true));
    expect(res.status).toBe(400);
    expect(await body(res)).toMatchObject({ reason: "invalid_form" });
  });

  it("multipart, as a browser may send it, works", async () => {
    const data = new FormData();
    data.set("email", "ops@example.com");
    data.set("password", PASSWORD);
    const res = await handleSignIn(
      new Request(`${ORIGIN}/api/session/signin`, { method: "POST", body: data }),
      deps(false),
    );
    expect(await signedInAs(res)).toBe(operatorId);
  });
});

describe("a body over 64 KiB (the red team's 100 MB form)", () => {
  const HUNDRED_MB = 100 * 1024 * 1024;
  const CHUNK = 16 * 1024;

  /** A form body made as it is read (password=aaaa…), counting what the server pulled. */
  function hugeForm(headers: Record<string, string> = {}) {
    const body = countingStream(HUNDRED_MB, CHUNK);
    const req = new Request(`${ORIGIN}/api/session/signin`, {
      method: "POST",
      // A person's browser posting it: the refusal is still a plain 413, not a way back to the
      // form.
      headers: {
        host: "127.0.0.1:3000",
        "content-type": "application/x-www-form-urlencoded",
        accept: "text/html",
        "x-once-peer-address": "192.0.2.99",
        ...headers,
      },
      body: body.stream,
      duplex: "half",
    } as RequestInit);
    return { req, body };
  }

  async function expectTooLarge(res: Response) {
    expect(res.status).toBe(413);
    expect(await body(res)).toEqual({
      error: `The request body is larger than ${SIGN_IN_BODY_LIMIT_BYTES} bytes`,
      reason: "payload_too_large",
      docs: "/docs/errors#payload_too_large",
    });
    expect(res.headers.get("set-cookie")).toBeNull();
  }

  it("declared in Content-Length: 413 before a byte is read, nothing asked of the database", async () => {
    const attempts = await t.db.signInThrottle.count();
    const { req, body: sent } = hugeForm({ "content-length": String(HUNDRED_MB) });
    await expectTooLarge(await handleSignIn(req, deps(false)));
    expect(sent.pulled()).toBe(0);
    expect(await t.db.signInThrottle.count()).toBe(attempts);
  });

  it("streamed without a length: counted as it arrives, abandoned just past 64 KiB, 413", async () => {
    const attempts = await t.db.signInThrottle.count();
    const { req, body: sent } = hugeForm();
    await expectTooLarge(await handleSignIn(req, deps(false)));
    expect(sent.pulled()).toBeLessThanOrEqual(SIGN_IN_BODY_LIMIT_BYTES + 2 * CHUNK);
    expect(sent.cancelled()).toBe(true);
    expect(await t.db.signInThrottle.count()).toBe(attempts);
  });

  it("a form of the limit itself is read whole and signs in", async () => {
    const fields = new URLSearchParams({
      email: "ops@example.com",
      password: PASSWORD,
      next: "/orders",
    }).toString();
    const padded = `${fields}&pad=${"p".repeat(SIGN_IN_BODY_LIMIT_BYTES - fields.length - "&pad=".length)}`;
    expect(padded.length).toBe(SIGN_IN_BODY_LIMIT_BYTES);
    const req = new Request(`${ORIGIN}/api/session/signin`, {
      method: "POST",
      headers: {
        host: "127.0.0.1:3000",
        "content-type": "application/x-www-form-urlencoded",
        "x-once-peer-address": "192.0.2.98",
      },
      body: padded,
    });
    const res = await handleSignIn(req, deps(false));
    expect(res.status).toBe(303);
    expect(await signedInAs(res)).toBe(operatorId);
  });
});
