// Who is calling, from a bearer token or the session cookie, against the seeded demo accounts in
// a real database.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createDb } from "../db/client";
import { freePort } from "../../../tools/process";
import { principalFromHeaders } from "./principal";
import { SESSION_COOKIE } from "./session";
import { sessionValueFor } from "../../test/sessions";
import { hashToken } from "./token";

/** The tests' fixtures are the demo accounts (the doors without demo mode: demo-doors.test.ts). */
const DEMO = { demo: true };
const t = useTestDatabase({ poolMax: 2 });

const bearer = (token: string) => new Headers({ authorization: `Bearer ${token}` });
const cookie = (value: string) => new Headers({ cookie: `theme=dark; ${SESSION_COOKIE}=${value}` });

async function userId(email: string): Promise<string> {
  return (await t.db.user.findUniqueOrThrow({ where: { email } })).id;
}

describe("token hashing", () => {
  it("stores SHA-256 hex, never the token", () => {
    expect(hashToken("acme_demo_token")).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken("acme_demo_token")).toBe(hashToken("acme_demo_token"));
    expect(hashToken("acme_demo_token")).not.toBe(hashToken("globex_demo_token"));
  });
});

describe("bearer token", () => {
  it("acme's token is acme's buyer, acting for tenant acme", async () => {
    expect(await principalFromHeaders(t.db, bearer("acme_demo_token"), DEMO)).toEqual({
      userId: await userId("acme@example.com"),
      name: "Acme buyer",
      email: "acme@example.com",
      role: "TENANT",
      tenantId: "acme",
    });
  });

  it("globex's token acts for globex; the admin's for no tenant", async () => {
    expect(await principalFromHeaders(t.db, bearer("globex_demo_token"), DEMO)).toMatchObject({
      role: "TENANT",
      tenantId: "globex",
    });
    expect(await principalFromHeaders(t.db, bearer("admin_demo_token"), DEMO)).toMatchObject({
      role: "ADMIN",
      tenantId: null,
      email: "admin@example.com",
    });
  });

  it("the scheme is case-insensitive", async () => {
    expect(
      await principalFromHeaders(
        t.db,
        new Headers({ authorization: "bearer acme_demo_token" }),
        DEMO,
      ),
    ).toMatchObject({ tenantId: "acme" });
  });

  it("an unknown token, another scheme or a malformed header is nobody", async () => {
    expect(await principalFromHeaders(t.db, bearer("acme_demo_token_x"), DEMO)).toBeNull();
    expect(
      await principalFromHeaders(t.db, new Headers({ authorization: "Basic YWNtZTpwdw==" }), DEMO),
    ).toBeNull();
    expect(
      await principalFromHeaders(t.db, new Headers({ authorization: "Bearer" }), DEMO),
    ).toBeNull();
    expect(
      await principalFromHeaders(t.db, new Headers({ authorization: "Bearer a b" }), DEMO),
    ).toBeNull();
  });

  it("the stored hash is not itself a token", async () => {
    // Only the hash is looked up: knowing a row's tokenHash is not a credential either.
    expect(await principalFromHeaders(t.db, bearer(hashToken("acme_demo_token")), DEMO)).toBeNull();
  });

  it("a wrong bearer token is not rescued by a valid cookie", async () => {
    const headers = cookie(await sessionValueFor(t.db, await userId("acme@example.com")));
    headers.set("authorization", "Bearer wrong");
    expect(await principalFromHeaders(t.db, headers, DEMO)).toBeNull();
  });
});

describe("session cookie", () => {
  it("a live session is its user", async () => {
    const id = await userId("globex@example.com");
    expect(
      await principalFromHeaders(t.db, cookie(await sessionValueFor(t.db, id)), DEMO),
    ).toMatchObject({ userId: id, tenantId: "globex", role: "TENANT" });
  });

  it("no cookie, an expired session, a made-up token or a session's stored hash is nobody", async () => {
    const id = await userId("acme@example.com");
    expect(await principalFromHeaders(t.db, new Headers(), DEMO)).toBeNull();
    const expired = await sessionValueFor(t.db, id);
    await t.db
      .$executeRaw`UPDATE "Session" SET "expiresAt" = now() - interval '1 second' WHERE "tokenHash" = ${hashToken(expired)}`;
    expect(await principalFromHeaders(t.db, cookie(expired), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, cookie("A".repeat(43)), DEMO)).toBeNull();
    expect(
      await principalFromHeaders(
        t.db,
        cookie(hashToken(await sessionValueFor(t.db, id)).slice(0, 43)),
        DEMO,
      ),
    ).toBeNull();
  });

  it("a value that is not a session token is nobody, without asking the database", async () => {
    const down = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`, {
      max: 1,
    });
    try {
      for (const value of [
        "not-a-token",
        `${"A".repeat(43)}.x`,
        "3f1c2a4e-8b9d-4c2e-9f00-0123456789ab.9999999999.sig",
      ]) {
        expect(await principalFromHeaders(down, cookie(value), DEMO)).toBeNull();
      }
    } finally {
      await down.$disconnect();
    }
  });

  it("a database that cannot be reached is an error, not a silent sign-out", async () => {
    const down = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`, {
      max: 1,
    });
    try {
      await expect(
        principalFromHeaders(
          down,
          cookie(await sessionValueFor(t.db, await userId("acme@example.com"))),
          DEMO,
        ),
      ).rejects.toThrow();
      await expect(principalFromHeaders(down, bearer("acme_demo_token"), DEMO)).rejects.toThrow();
    } finally {
      await down.$disconnect();
    }
  });
});
