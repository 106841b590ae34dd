// Who is calling, from a bearer token or the session cookie, against the seeded demo accounts in
// a real database.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { createDb } from "../db/client";
import { freePort } from "../../../tools/process";
import { principalFromHeaders } from "./principal";
import { createSessionValue, SESSION_COOKIE } from "./session";
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
    expect(await principalFromHeaders(t.db, bearer("globex_demo_token"), DEMO)).toMatchObject({ role: "TENANT", tenantId: "globex" });
    expect(await principalFromHeaders(t.db, bearer("admin_demo_token"), DEMO)).toMatchObject({ role: "ADMIN", tenantId: null, email: "admin@example.com" });
  });

  it("the scheme is case-insensitive", async () => {
    expect(await principalFromHeaders(t.db, new Headers({ authorization: "bearer acme_demo_token" }), DEMO)).toMatchObject({ tenantId: "acme" });
  });

  it("an unknown token, another scheme or a malformed header is nobody", async () => {
    expect(await principalFromHeaders(t.db, bearer("acme_demo_token_x"), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, new Headers({ authorization: "Basic YWNtZTpwdw==" }), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, new Headers({ authorization: "Bearer" }), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, new Headers({ authorization: "Bearer a b" }), DEMO)).toBeNull();
  });

  it("the stored hash is not itself a token", async () => {
    // Only the hash is looked up: knowing a row's tokenHash is not a credential either.
    expect(await principalFromHeaders(t.db, bearer(hashToken("acme_demo_token")), DEMO)).toBeNull();
  });

  it("a wrong bearer token is not rescued by a valid cookie", async () => {
    const headers = cookie(createSessionValue(await userId("acme@example.com")));
    headers.set("authorization", "Bearer wrong");
    expect(await principalFromHeaders(t.db, headers, DEMO)).toBeNull();
  });
});

describe("session cookie", () => {
  it("a signed session is its user", async () => {
    const id = await userId("globex@example.com");
    expect(await principalFromHeaders(t.db, cookie(createSessionValue(id)), DEMO)).toMatchObject({ userId: id, tenantId: "globex", role: "TENANT" });
  });

  it("no cookie, an expired, tampered or unknown user's session is nobody", async () => {
    const id = await userId("acme@example.com");
    expect(await principalFromHeaders(t.db, new Headers(), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, cookie(createSessionValue(id, Date.UTC(2020, 0, 1))), DEMO)).toBeNull();
    const [, expires, signature] = createSessionValue(id).split(".");
    const other = await userId("admin@example.com");
    expect(await principalFromHeaders(t.db, cookie(`${other}.${expires}.${signature}`), DEMO)).toBeNull();
    expect(await principalFromHeaders(t.db, cookie(createSessionValue("00000000-0000-4000-8000-000000000000")), DEMO)).toBeNull();
  });

  it("a signed value that is not a user id is nobody, without asking the database", async () => {
    expect(await principalFromHeaders(t.db, cookie(createSessionValue("not-a-uuid")), DEMO)).toBeNull();
  });

  it("a database that cannot be reached is an error, not a silent sign-out", async () => {
    const down = createDb(`postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`, { max: 1 });
    try {
      await expect(principalFromHeaders(down, cookie(createSessionValue(await userId("acme@example.com"))), DEMO)).rejects.toThrow();
      await expect(principalFromHeaders(down, bearer("acme_demo_token"), DEMO)).rejects.toThrow();
    } finally {
      await down.$disconnect();
    }
  });
});
