// The users CLI's commands, run in-process against a real database: what they refuse (one
// sentence each) and what they make (a password that signs in, a token that authenticates,
// stored only as hashes).
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../../test/database";
import { principalFromHeaders } from "./principal";
import { verifyPassword } from "./password";
import { hashToken } from "./token";
import { AccountError, parseCommand, runCommand, UsageError } from "./users-cli";

const t = useTestDatabase({ poolMax: 2 });
const PASSWORD = "operator password 1";
const run = (argv: string[], password = PASSWORD) =>
  runCommand(t.db, parseCommand(argv), async () => password);

describe("parseCommand", () => {
  it.each([
    [
      [
        "create-user",
        "--email",
        "a@b.example",
        "--name",
        "A",
        "--role",
        "admin",
        "--password",
        "hunter2hunter2",
      ],
      /never taken from the command line/,
    ],
    [["create-user", "--password=x"], /never taken from the command line/],
    [[], /Name a command/],
    [["make-admin"], /Unknown command "make-admin"/],
    [["create-user", "--email", "a@b.example", "--name", "A"], /Missing --role/],
    [
      ["create-user", "--email", "a@b.example", "--name", "A", "--role", "root"],
      /--role is admin or tenant/,
    ],
    [
      ["create-token", "--email", "a@b.example", "--label", "ci", "--colour", "red"],
      /Unknown option '--colour'/,
    ],
  ])("%j is refused: %s", (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(UsageError);
    expect(() => parseCommand(argv)).toThrow(message);
  });
});

describe("create-user", () => {
  it("an operator: the password is stored as scrypt and verifies; the address is kept lower-case", async () => {
    const out = await run([
      "create-user",
      "--email",
      "Ops@Shop.example",
      "--name",
      "Ops",
      "--role",
      "admin",
    ]);
    expect(out.out).toMatch(/Created operator \(admin\) ops@shop\.example/);
    const user = await t.db.user.findUniqueOrThrow({ where: { email: "ops@shop.example" } });
    expect(user).toMatchObject({ role: "ADMIN", tenantId: null, demo: false });
    expect(user.passwordHash).toMatch(/^scrypt\$/);
    expect(user.passwordHash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, user.passwordHash!)).toBe(true);
  });

  it.each([
    [
      ["--email", "not-an-address", "--name", "X", "--role", "admin"],
      PASSWORD,
      /e-mail address is not valid/,
    ],
    [["--email", "t@shop.example", "--name", "X", "--role", "tenant"], PASSWORD, /needs --tenant/],
    [
      ["--email", "t@shop.example", "--name", "X", "--role", "tenant", "--tenant", "initech"],
      PASSWORD,
      /Tenant initech does not exist/,
    ],
    [
      ["--email", "t@shop.example", "--name", "X", "--role", "admin", "--tenant", "acme"],
      PASSWORD,
      /An admin acts for no tenant/,
    ],
    [
      ["--email", "t@shop.example", "--name", "X", "--role", "admin"],
      "short",
      /at least 12 characters/,
    ],
    [["--email", "ops@shop.example", "--name", "X", "--role", "admin"], PASSWORD, /already exists/],
  ])("%j with password %j is refused: %s", async (args, password, message) => {
    await expect(run(["create-user", ...args], password)).rejects.toThrow(AccountError);
    await expect(run(["create-user", ...args], password)).rejects.toThrow(message);
  });
});

describe("create-token", () => {
  it("prints a token once; only its hash is stored; it authenticates as the user", async () => {
    await run([
      "create-user",
      "--email",
      "buyer@acme.example",
      "--name",
      "Buyer",
      "--role",
      "tenant",
      "--tenant",
      "acme",
    ]);
    const { out, note } = await run([
      "create-token",
      "--email",
      "buyer@acme.example",
      "--label",
      "ci",
    ]);
    expect(out).toMatch(/^once_[\w-]{43}$/);
    expect(note).toMatch(/Shown once/);
    const stored = await t.db.apiToken.findMany({
      where: { user: { email: "buyer@acme.example" } },
    });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.tokenHash).toBe(hashToken(out));
    expect(JSON.stringify(stored)).not.toContain(out);
    const principal = await principalFromHeaders(
      t.db,
      new Headers({ authorization: `Bearer ${out}` }),
      { demo: false },
    );
    expect(principal).toMatchObject({
      email: "buyer@acme.example",
      tenantId: "acme",
      role: "TENANT",
    });
  });

  it("refuses demo accounts and unknown addresses", async () => {
    await expect(
      run(["create-token", "--email", "admin@example.com", "--label", "x"]),
    ).rejects.toThrow(/is a demo account/);
    await expect(
      run(["create-token", "--email", "ghost@shop.example", "--label", "x"]),
    ).rejects.toThrow(/No user has the e-mail address/);
  });
});

describe("set-password and create-tenant", () => {
  it("a new password replaces the old one", async () => {
    await run(["set-password", "--email", "ops@shop.example"], "the new password 2");
    const user = await t.db.user.findUniqueOrThrow({ where: { email: "ops@shop.example" } });
    expect(await verifyPassword("the new password 2", user.passwordHash!)).toBe(true);
    expect(await verifyPassword(PASSWORD, user.passwordHash!)).toBe(false);
  });

  it("creates a tenant once, with a slug id", async () => {
    expect((await run(["create-tenant", "--id", "initech", "--name", "Initech"])).out).toBe(
      "Created tenant initech.",
    );
    await expect(run(["create-tenant", "--id", "initech", "--name", "Initech"])).rejects.toThrow(
      /already exists/,
    );
    await expect(run(["create-tenant", "--id", "Not A Slug", "--name", "x"])).rejects.toThrow(
      /lower-case letters/,
    );
  });
});
