// Sessions end when they should, attacked with the old cookie: after sign-out, after
// `set-password`, after `revoke-sessions`, after the operator ends it, and after its expiry, the
// cookie that worked a moment before is 401 on admin.stats. Each through the real door.
import { beforeAll, describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { callTrpc, TOKENS } from "../../test/http";
import { createUser } from "./accounts";
import {
  clearSessionCookieHeader,
  readCookie,
  SESSION_COOKIE,
  SESSION_LIFETIME_SECONDS,
  sessionCookieHeader,
} from "./session";
import { handleSignIn } from "./sign-in";
import { handleSignOut } from "./sign-out";
import { hashToken } from "./token";
import { parseCommand, runCommand } from "./users-cli";

const t = useTestDatabase({ poolMax: 4 });
const ORIGIN = "http://127.0.0.1:3000";
const PASSWORD = "a long enough password";
const EMAIL = "ops@example.com";

beforeAll(async () => {
  await createUser(t.db, { email: EMAIL, name: "Ops", role: "ADMIN", password: PASSWORD });
});

/** Signs in through the real form post; the cookie the browser would send back. */
async function signIn(password = PASSWORD): Promise<string> {
  const res = await handleSignIn(
    new Request(`${ORIGIN}/api/session/signin`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-once-peer-address": "198.51.100.7",
      },
      body: new URLSearchParams({ email: EMAIL, password }).toString(),
    }),
    { db: t.db, demo: false },
  );
  expect(res.status).toBe(303);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

const endSession = (id: string) =>
  callTrpc(t.db, {
    path: "admin.sessions.end",
    token: TOKENS.admin,
    key: crypto.randomUUID(),
    input: { id, reason: "laptop lost" },
  });
const stats = (cookie: string) =>
  callTrpc(t.db, { path: "admin.stats", method: "GET", headers: { cookie } });

describe("a session ends when it should: the old cookie is 401", () => {
  it("after sign-out", async () => {
    const cookie = await signIn();
    expect((await stats(cookie)).status).toBe(200);
    const out = await handleSignOut(
      new Request(`${ORIGIN}/api/session/signout`, { method: "POST", headers: { cookie } }),
      { db: t.db, trustedProxies: 0 },
    );
    expect(out.status).toBe(303);
    expect(out.headers.get("set-cookie")).toBe(clearSessionCookieHeader());
    expect((await stats(cookie)).status).toBe(401);
  });

  it("after `npm run users -- set-password`, for every session of the account", async () => {
    const [laptop, phone] = [await signIn(), await signIn()];
    expect((await stats(laptop)).status).toBe(200);
    const out = await runCommand(
      t.db,
      parseCommand(["set-password", "--email", EMAIL]),
      async () => PASSWORD,
    );
    expect(out.out).toMatch(/2 sessions ended/);
    expect((await stats(laptop)).status).toBe(401);
    expect((await stats(phone)).status).toBe(401);
  });

  it("after `npm run users -- revoke-sessions`", async () => {
    const cookie = await signIn();
    expect((await stats(cookie)).status).toBe(200);
    expect(
      (await runCommand(t.db, parseCommand(["revoke-sessions", "--email", EMAIL]), async () => ""))
        .out,
    ).toBe(`1 session of ${EMAIL} ended.`);
    expect((await stats(cookie)).status).toBe(401);
  });

  it("after the operator ends it (admin.sessions.end, audited), and the operator sees it before", async () => {
    const cookie = await signIn();
    const listed = await callTrpc(t.db, {
      path: "admin.sessions.list",
      method: "GET",
      token: TOKENS.admin,
      input: { email: EMAIL },
    });
    expect(listed.status).toBe(200);
    const [session] = listed.json.result.data as { id: string; email: string; role: string }[];
    expect(session).toMatchObject({ email: EMAIL, role: "ADMIN" });
    // Part of an address finds it too (an operator types "ops@" or the domain); one that is no part
    // of it, nothing.
    for (const part of ["ops@", "EXAMPLE.com", "ops"]) {
      const found = await callTrpc(t.db, {
        path: "admin.sessions.list",
        method: "GET",
        token: TOKENS.admin,
        input: { email: part },
      });
      expect(
        (found.json.result.data as { id: string }[]).map((s) => s.id),
        part,
      ).toContain(session!.id);
    }
    const none = await callTrpc(t.db, {
      path: "admin.sessions.list",
      method: "GET",
      token: TOKENS.admin,
      input: { email: "nobody@" },
    });
    expect(none.json.result.data).toEqual([]);
    const ended = await endSession(session!.id);
    expect(ended.status).toBe(200);
    expect((await stats(cookie)).status).toBe(401);
    expect(
      await t.db.auditEntry.count({
        where: { action: "session.end", targetId: session!.id, reason: "laptop lost" },
      }),
    ).toBe(1);
    const again = await endSession(session!.id);
    expect(again.status).toBe(404);
    expect(again.json.error.data.reason).toBe("session_not_found");
  });

  it("after the operator ends every session of the account (admin.sessions.endAll)", async () => {
    const cookie = await signIn();
    const ended = await callTrpc(t.db, {
      path: "admin.sessions.endAll",
      token: TOKENS.admin,
      key: crypto.randomUUID(),
      input: { email: EMAIL, reason: "cookie copied" },
    });
    expect(ended.status).toBe(200);
    expect(ended.json.result.data.ended).toBe(1);
    expect((await stats(cookie)).status).toBe(401);
  });

  it("after its expiry, by the server's clock, whatever the browser keeps", async () => {
    const cookie = await signIn();
    expect((await stats(cookie)).status).toBe(200);
    const hash = hashToken(readCookie(cookie, SESSION_COOKIE)!);
    const [row] = await t.db.$queryRaw<{ lifetime: number }[]>`
      SELECT extract(epoch FROM "expiresAt" - "createdAt")::int AS "lifetime" FROM "Session" WHERE "tokenHash" = ${hash}`;
    expect(row!.lifetime).toBe(SESSION_LIFETIME_SECONDS.ADMIN);
    await t.db
      .$executeRaw`UPDATE "Session" SET "expiresAt" = now() - interval '1 second' WHERE "tokenHash" = ${hash}`;
    expect((await stats(cookie)).status).toBe(401);
  });

  it("only its hash is stored: the cookie's value is in no row", async () => {
    const value = readCookie(await signIn(), SESSION_COOKIE)!;
    expect(await t.db.session.count({ where: { tokenHash: value } })).toBe(0);
    expect(await t.db.session.count({ where: { tokenHash: hashToken(value) } })).toBe(1);
  });
});

describe("the cookie", () => {
  it("is HttpOnly, SameSite=Lax, site-wide, as long as the session, and Secure only over HTTPS", () => {
    const session = { value: "v", maxAgeSeconds: SESSION_LIFETIME_SECONDS.ADMIN };
    expect(sessionCookieHeader(session, false)).toBe(
      `${SESSION_COOKIE}=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200`,
    );
    expect(sessionCookieHeader(session, true)).toBe(
      `${SESSION_COOKIE}=v; Path=/; HttpOnly; SameSite=Lax; Max-Age=43200; Secure`,
    );
    expect(clearSessionCookieHeader()).toBe(
      `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`,
    );
  });

  it("is found among other cookies, with '=' in its value kept", () => {
    expect(readCookie(`a=1; ${SESSION_COOKIE}=x.y=z; b=2`, SESSION_COOKIE)).toBe("x.y=z");
    expect(readCookie(`${SESSION_COOKIE}_old=1`, SESSION_COOKIE)).toBeUndefined();
    expect(readCookie(null, SESSION_COOKIE)).toBeUndefined();
  });
});
