// Issue 10, the browser doors attacked from another site, in a real Chromium: an attacker's page
// (served from http://localhost:<port>, another site than the app's 127.0.0.1) auto-submits a
// sign-in form (login CSRF) or a sign-out form, and frames the shop (clickjacking).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { BASE_URL } from "./ports";
import { expect, signIn, test } from "./fixtures";

let attacker: http.Server;
let attackerOrigin: string;

/** The attacker's pages, each a few lines of HTML served from another site. */
const PAGES: Record<string, string> = {
  "/login-csrf": `<form id="f" method="post" action="${BASE_URL}/api/session/signin">
      <input name="email" value="globex@example.com"><input name="next" value="/orders"></form>
    <script>document.getElementById("f").submit()</script>`,
  "/logout-csrf": `<form id="f" method="post" action="${BASE_URL}/api/session/signout"></form>
    <script>document.getElementById("f").submit()</script>`,
  "/frame": `<h1>Win a prize</h1><iframe title="victim" src="${BASE_URL}/cart" width="800" height="600"></iframe>`,
};

test.beforeAll(async () => {
  attacker = http.createServer((req, res) => {
    const page = PAGES[req.url ?? ""];
    res.writeHead(page ? 200 : 404, { "content-type": "text/html" });
    res.end(page ?? "not found");
  });
  attacker.listen(0, "127.0.0.1");
  await new Promise((resolve) => attacker.once("listening", resolve));
  attackerOrigin = `http://localhost:${(attacker.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise((resolve) => attacker.close(resolve));
});

test("login CSRF: another site's auto-submitted sign-in form is refused; the visitor stays signed out", async ({
  page,
}) => {
  const answer = page.waitForResponse(`${BASE_URL}/api/session/signin`);
  await page.goto(`${attackerOrigin}/login-csrf`);
  const res = await answer;
  expect(res.status()).toBe(403);
  expect(await res.json()).toMatchObject({ reason: "cross_site_request" });
  expect((await page.context().cookies(BASE_URL)).map((c) => c.name)).not.toContain("once_session");
  await page.goto("/");
  await expect(page.getByRole("link", { name: "Sign in" })).toBeVisible();
});

test("another site cannot sign a visitor out", async ({ page }) => {
  await signIn(page, "acme");
  const answer = page.waitForResponse(`${BASE_URL}/api/session/signout`);
  await page.goto(`${attackerOrigin}/logout-csrf`);
  expect((await answer).status()).toBe(403);
  await page.goto("/");
  await expect(page.getByText("Signed in as Acme buyer")).toBeVisible();
});

test("clickjacking: the shop refuses to be framed by another site", async ({ page }) => {
  const framed = page.waitForResponse(`${BASE_URL}/cart`);
  await page.goto(`${attackerOrigin}/frame`);
  const res = await framed;
  expect(res.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
  // Chromium replaces a refused frame with its error page: the shop never renders inside it.
  const frame = page.getByTitle("victim").contentFrame();
  await expect
    .poll(() =>
      page
        .frames()
        .find((f) => f !== page.mainFrame())
        ?.url(),
    )
    .toMatch(/^chrome-error:/);
  await expect(frame.getByRole("navigation", { name: "Main" })).toHaveCount(0);
});

test("our own sign-in page still signs in (the same form, from our origin)", async ({ page }) => {
  await signIn(page, "globex", "/orders");
  await expect(page).toHaveURL(`${BASE_URL}/orders`);
});
