// `npm run users` as an operator runs it: a child process, the password piped on stdin, the
// database named by DATABASE_URL; and with no database running, one sentence and exit 1.
import { spawn } from "node:child_process";
import { once } from "node:events";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { verifyPassword } from "../src/server/auth/password";
import { freePort } from "../tools/process";
import { useTestDatabase } from "../src/test/database";

const t = useTestDatabase({ poolMax: 1 });
const ROOT = path.resolve(import.meta.dirname, "..");

async function users(args: string[], options: { stdin?: string; databaseUrl: string }) {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, "node_modules/tsx/dist/cli.mjs"), "scripts/users.ts", ...args],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: options.databaseUrl },
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d));
  child.stderr.on("data", (d: Buffer) => (stderr += d));
  child.stdin.end(options.stdin ?? "");
  const [code] = (await once(child, "exit", { signal: AbortSignal.timeout(30_000) })) as [number];
  return { code, stdout, stderr };
}

describe("npm run users", () => {
  it("creates an operator with the password from stdin (one line ending dropped), then a token printed alone", async () => {
    const made = await users(
      ["create-user", "--email", "root@shop.example", "--name", "Root", "--role", "admin"],
      {
        stdin: "piped operator password\n",
        databaseUrl: t.url,
      },
    );
    expect(made.stderr).toBe("");
    expect(made).toMatchObject({ code: 0 });
    const user = await t.db.user.findUniqueOrThrow({ where: { email: "root@shop.example" } });
    expect(await verifyPassword("piped operator password", user.passwordHash!)).toBe(true);

    const token = await users(
      ["create-token", "--email", "root@shop.example", "--label", "metrics"],
      { databaseUrl: t.url },
    );
    expect(token.code).toBe(0);
    expect(token.stdout.trim()).toMatch(/^once_[\w-]{43}$/);
    expect(token.stderr).toMatch(/Shown once/);
  });

  it("a password piped twice (the prompt's two answers) is stored without either line ending", async () => {
    const made = await users(
      ["create-user", "--email", "twice@shop.example", "--name", "Twice", "--role", "admin"],
      { stdin: "piped twice password\npiped twice password\n", databaseUrl: t.url },
    );
    expect(made).toMatchObject({ code: 0, stderr: "" });
    const user = await t.db.user.findUniqueOrThrow({ where: { email: "twice@shop.example" } });
    expect(await verifyPassword("piped twice password", user.passwordHash!)).toBe(true);
  });

  it.each([[["--help"]], [["-h"]], [["help"]], [["create-user", "--help"]]])(
    "%j prints the usage on stdout and exits 0, without a database",
    async (args) => {
      const res = await users(args, {
        databaseUrl: `postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`,
      });
      expect(res).toMatchObject({ code: 0, stderr: "" });
      expect(res.stdout).toMatch(/^usage: npm run users -- <command> \[options\]/);
      for (const command of [
        "create-user",
        "set-password",
        "revoke-sessions",
        "create-token",
        "create-tenant",
      ])
        expect(res.stdout).toContain(command);
    },
  );

  it("a password on the command line is refused with exit 2, before touching anything", async () => {
    const res = await users(
      [
        "create-user",
        "--email",
        "x@shop.example",
        "--name",
        "X",
        "--role",
        "admin",
        "--password",
        "on the command line",
      ],
      {
        databaseUrl: t.url,
      },
    );
    expect(res.code).toBe(2);
    expect(res.stderr.split("\n")[0]).toBe(
      "Passwords are never taken from the command line (shell history, ps): pipe it on stdin or type it at the prompt.",
    );
    expect(await t.db.user.count({ where: { email: "x@shop.example" } })).toBe(0);
  });

  it("with no database running: one sentence, exit 1, no stack trace", async () => {
    const res = await users(["create-token", "--email", "root@shop.example", "--label", "x"], {
      databaseUrl: `postgresql://postgres:postgres@127.0.0.1:${await freePort()}/once`,
    });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      "Cannot reach the database (DATABASE_URL, or the embedded one of a running `npm run dev`): start it and try again.",
    );
  });

  it("a refusal is one sentence and exit 1", async () => {
    const res = await users(
      ["create-user", "--email", "y@shop.example", "--name", "Y", "--role", "admin"],
      { stdin: "short", databaseUrl: t.url },
    );
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe("The password must have at least 12 characters.");
  });
});
