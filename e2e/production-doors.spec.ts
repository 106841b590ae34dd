// Issue 10, the doors of a production build, attacked from outside: `next start` without
// DEMO_MODE over a database that still holds the demo accounts and tokens (production-server.ts).
// Nothing demo opens; an operator made with `npm run users` signs in with a password; guesses are
// throttled; redirects, cross-site posts, content types, headers and health behave.
import { request as playwrightRequest, type APIRequestContext } from "@playwright/test";
import { readFileSync } from "node:fs";
import { request as socketRequest } from "node:http";
import { crossSiteRefusal } from "../src/test/cross-site";
import { expect, test } from "./fixtures";
import { startProductionServer, type ProductionServer } from "./production-server";

const OPERATOR = { email: "ops@shop.example", password: "correct horse battery staple" };
const DEMO_TOKENS = ["admin_demo_token", "acme_demo_token", "globex_demo_token"];
const DEMO_EMAILS = ["admin@example.com", "acme@example.com", "globex@example.com"];

let server: ProductionServer;
let http: APIRequestContext;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  test.setTimeout(120_000);
  server = await startProductionServer();
  http = await playwrightRequest.newContext({ baseURL: server.baseURL });
  const made = await server.users(
    ["create-user", "--email", OPERATOR.email, "--name", "Ops", "--role", "admin"],
    `${OPERATOR.password}\n`,
  );
  expect(made.code, made.stderr).toBe(0);
});

test.afterAll(async () => {
  await http?.dispose();
  await server?.stop();
});

/** A form post to sign-in, redirects not followed, so we see where it would send the browser. */
function signInPost(form: Record<string, string>, headers: Record<string, string> = {}) {
  return http.post("/api/session/signin", { form, headers, maxRedirects: 0 });
}

test("passwordless sign-in as a demo account is refused, and no cookie is set", async () => {
  for (const email of DEMO_EMAILS) {
    const res = await signInPost({ email });
    expect(res.status(), email).toBe(400);
    expect(await res.json()).toMatchObject({ reason: "password_required" });
    expect(res.headers()["set-cookie"]).toBeUndefined();
  }
});

test("every demo token is refused (401), on tenant and admin procedures and on /api/metrics", async () => {
  for (const token of DEMO_TOKENS) {
    const headers = { authorization: `Bearer ${token}` };
    expect((await http.get("/api/trpc/orders.list", { headers })).status(), token).toBe(401);
    expect((await http.get("/api/trpc/admin.stats", { headers })).status(), token).toBe(401);
    expect((await http.get("/api/metrics", { headers })).status(), token).toBe(401);
  }
});

test("the sign-in page offers a password form and no demo buttons", async ({ page }) => {
  await page.goto(`${server.baseURL}/signin`);
  await expect(page.getByLabel("Password", { exact: true })).toBeVisible();
  await expect(page.getByRole("list", { name: "Demo accounts" })).toHaveCount(0);
  await expect(page.getByRole("button", { name: /Sign in as/ })).toHaveCount(0);
});

test("the operator signs in with the password; a wrong password is refused", async ({ page }) => {
  await page.goto(`${server.baseURL}/signin`);
  await page.getByLabel("E-mail address").fill(OPERATOR.email);
  await page.getByLabel("Password", { exact: true }).fill("not the password at all");
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(
    page.getByRole("alert").filter({ hasText: "Wrong e-mail address or password." }),
  ).toBeVisible();
  expect((await page.context().cookies()).map((c) => c.name)).not.toContain("once_session");

  await page.getByLabel("E-mail address").fill(OPERATOR.email);
  await page.getByLabel("Password", { exact: true }).fill(OPERATOR.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page).toHaveURL(`${server.baseURL}/admin`);
  await expect(page.getByText("Signed in as Ops")).toBeVisible();
});

test("guessing from one address is throttled: 429 with Retry-After, then even the right password waits there (only there: src/server/auth/sign-in.test.ts)", async () => {
  const made = await server.users(
    ["create-user", "--email", "victim@shop.example", "--name", "Victim", "--role", "admin"],
    "the victim's password\n",
  );
  expect(made.code, made.stderr).toBe(0);
  const statuses = [];
  for (let i = 0; i < 5; i++)
    statuses.push(
      (await signInPost({ email: "victim@shop.example", password: `guess ${i} of many` })).status(),
    );
  expect(statuses).toEqual([401, 401, 401, 401, 401]);
  const throttled = await signInPost({
    email: "victim@shop.example",
    password: "the victim's password",
  });
  expect(throttled.status()).toBe(429);
  expect(Number(throttled.headers()["retry-after"])).toBeGreaterThan(0);
  expect(await throttled.json()).toMatchObject({ reason: "too_many_attempts" });
  expect(throttled.headers()["set-cookie"]).toBeUndefined();
});

test("next= never leads off the site", async () => {
  for (const next of [
    "/\\evil.example",
    "/\t/evil.example",
    "/%09/evil.example",
    "//evil.example",
    "https://evil.example",
  ]) {
    const res = await signInPost({ ...OPERATOR, next });
    expect(res.status(), next).toBe(303);
    const location = res.headers()["location"]!;
    expect(new URL(location, server.baseURL).origin, `${JSON.stringify(next)} → ${location}`).toBe(
      server.baseURL,
    );
  }
});

test("next=/\\evil.example through the browser lands on this site", async ({ page }) => {
  await page.goto(`${server.baseURL}/signin?next=${encodeURIComponent("/\\evil.example")}`);
  await page.getByLabel("E-mail address").fill(OPERATOR.email);
  await page.getByLabel("Password", { exact: true }).fill(OPERATOR.password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
  await expect(page.getByText("Signed in as Ops")).toBeVisible();
  expect(new URL(page.url()).origin).toBe(server.baseURL);
});

test("cross-site sign-in, sign-out and mutation posts are 403 cross_site_request", async () => {
  const evil = { origin: "https://evil.example", "sec-fetch-site": "cross-site" };
  const signIn = await signInPost(OPERATOR, evil);
  expect(signIn.status()).toBe(403);
  expect(await signIn.json()).toMatchObject({ reason: "cross_site_request" });
  expect(signIn.headers()["set-cookie"]).toBeUndefined();

  const own = await signInPost(OPERATOR, {
    origin: server.baseURL,
    "sec-fetch-site": "same-origin",
  });
  const session = own.headers()["set-cookie"]!.split(";")[0]!;
  const signOut = await http.post("/api/session/signout", {
    headers: { ...evil, cookie: session },
    maxRedirects: 0,
  });
  expect(signOut.status()).toBe(403);
  expect(signOut.headers()["set-cookie"]).toBeUndefined();

  const mutation = await http.post("/api/trpc/admin.keys.release", {
    headers: {
      ...evil,
      cookie: session,
      "content-type": "application/json",
      "idempotency-key": "csrf-1",
    },
    data: JSON.stringify({ id: "00000000-0000-4000-8000-000000000000", reason: "csrf" }),
  });
  expect(mutation.status()).toBe(403);
  expect(await mutation.json()).toEqual(crossSiteRefusal(expect.any(String)));

  // A bearer-token caller without a cookie is not a browser riding on a session: not refused as
  // cross-site. (A fresh client: `http` keeps the cookies of the sign-ins above.)
  const api = await playwrightRequest.newContext({ baseURL: server.baseURL });
  const bearer = await api.post("/api/trpc/checkout.placeOrder", {
    headers: {
      origin: "https://evil.example",
      authorization: "Bearer not-a-token",
      "content-type": "application/json",
      "idempotency-key": "b-1",
    },
    data: JSON.stringify({
      items: [{ productId: "00000000-0000-4000-8000-000000000000", quantity: 1 }],
    }),
  });
  expect(bearer.status()).toBe(401);
  await api.dispose();
});

test("sign-in with a JSON body is 415 with a reason, not 500", async () => {
  const res = await http.post("/api/session/signin", {
    headers: { "content-type": "application/json" },
    data: JSON.stringify({ email: "admin@example.com" }),
    maxRedirects: 0,
  });
  expect(res.status()).toBe(415);
  expect(await res.json()).toMatchObject({ reason: "unsupported_media_type" });
});

const HUNDRED_MB = 100 * 1024 * 1024;

/** The server's peak resident memory so far (VmHWM), in bytes. */
function peakMemory(pid: number): number {
  const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!;
  return Number(kib) * 1024;
}

/**
 * Posts a 100 MB sign-in form over a real socket (node:http, not Playwright's client, which would
 * build the whole body first), written as the socket takes it, and stops
 * writing once the answer is in: `written` bounds what the server can have read before answering.
 */
function postHugeForm(
  baseURL: string,
  headers: Record<string, string>,
): Promise<{ status: number; body: string; written: number }> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = socketRequest(
      new URL("/api/session/signin", baseURL),
      {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      },
      (res) => {
        answered = true;
        let body = "";
        res.on("data", (d: Buffer) => (body += d));
        res.on("end", () => {
          resolve({ status: res.statusCode!, body, written });
          req.destroy();
        });
      },
    );
    req.on("error", (error) => {
      if (!answered) reject(error);
    });
    const chunk = Buffer.alloc(64 * 1024, "a");
    const pump = () => {
      while (!answered && written < HUNDRED_MB) {
        written += chunk.length;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

test("a 100 MB sign-in form, declared or streamed, is 413 before the server reads it: a few MB crossed the socket, none stayed in memory", async () => {
  const before = peakMemory(server.pid);
  const declaredOrStreamed: Record<string, string>[] = [
    { "content-length": String(HUNDRED_MB) },
    {},
  ];
  for (const headers of declaredOrStreamed) {
    const answer = await postHugeForm(server.baseURL, headers);
    expect(answer.status, JSON.stringify(headers)).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ reason: "payload_too_large" });
    // Socket buffers on both sides hold a few MB at most; the form was 100 MB.
    expect(answer.written).toBeLessThan(16 * 1024 * 1024);
  }
  // Reading the form whole (what sign-in did) raised the server's peak by its size, twice over.
  expect(peakMemory(server.pid) - before).toBeLessThan(32 * 1024 * 1024);
});

test("a page and an API answer carry the security headers", async () => {
  for (const path of ["/", "/signin", "/api/trpc/catalog.list", "/api/health"]) {
    const headers = (await http.get(path)).headers();
    expect(headers["content-security-policy"], path).toContain("frame-ancestors 'none'");
    expect(headers["x-content-type-options"], path).toBe("nosniff");
    expect(headers["referrer-policy"], path).toBe("same-origin");
    expect(headers["x-frame-options"], path).toBe("DENY");
  }
});

test("health says up, then down when PostgreSQL stops, and never where the database is", async () => {
  const up = await http.get("/api/health");
  expect(up.status()).toBe(200);
  expect(await up.json()).toMatchObject({ status: "up", database: "up" });
  await server.stopDatabase();
  // Health answers from the process's probe, which sees the stop within its interval.
  await expect.poll(async () => (await http.get("/api/health")).status()).toBe(503);
  const down = await http.get("/api/health");
  const text = await down.text();
  expect(JSON.parse(text)).toMatchObject({ status: "down", database: "down" });
  // The reading's age is the one number health may say; no port.
  expect(text.replace(/"ageMs":\d+/, "")).not.toMatch(
    /127\.0\.0\.1|ECONNREFUSED|postgres|prisma|\d{4,5}/i,
  );

  // Sign-in without its database: 503 with a reason, not a 500 or the driver's words.
  const signIn = await signInPost(OPERATOR);
  expect(signIn.status()).toBe(503);
  const answer = await signIn.text();
  expect(JSON.parse(answer)).toMatchObject({ reason: "store_unavailable" });
  expect(answer).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|postgres|prisma/i);
});
