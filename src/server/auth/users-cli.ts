// `npm run users -- <command> [options]`: the operator's way to make accounts and tokens (without
// demo mode nothing else makes them). Parsing and running live here, so tests call them directly;
// scripts/users.ts only finds the database and reads the password.
import { parseArgs } from "node:util";
import type { Db } from "../db/client";
import {
  AccountError,
  createApiToken,
  createTenant,
  createUser,
  revokeSessions,
  setPassword,
} from "./accounts";

export const USAGE = `usage: npm run users -- <command> [options]
       npm run users -- --help                         prints this

  create-user  --email <address> --name <name> --role admin|tenant [--tenant <id>]
               the password is read from stdin (or typed at a prompt), never from the command line
  set-password --email <address>                       (password from stdin or a prompt)
               ends every session of the account
  revoke-sessions --email <address>                    signs the account out everywhere
  create-token --email <address> --label <what uses it>  prints the token once
  create-tenant --id <slug> --name <name>

Uses DATABASE_URL, or the embedded database of a running \`npm run dev\` / \`npm start\`.`;

type Command = ReturnType<typeof parseCommand>;

export class UsageError extends Error {}

const OPTIONS = {
  email: { type: "string" },
  name: { type: "string" },
  role: { type: "string" },
  tenant: { type: "string" },
  label: { type: "string" },
  id: { type: "string" },
} as const;

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (!value) throw new UsageError(`Missing --${name}.`);
  return value;
}

function role(value: string): "TENANT" | "ADMIN" {
  if (value === "admin" || value === "operator") return "ADMIN";
  if (value === "tenant") return "TENANT";
  throw new UsageError(`--role is admin or tenant, not ${JSON.stringify(value)}.`);
}

/** `--help`, `-h` or `help` anywhere a person would type it: the usage, and nothing run. */
export const asksForHelp = (argv: string[]) =>
  argv[0] === "help" || argv.some((a) => a === "--help" || a === "-h");

const COMMANDS = "create-user, set-password, revoke-sessions, create-token or create-tenant";

export function parseCommand(argv: string[]) {
  if (argv.some((a) => a === "--password" || a.startsWith("--password=") || a === "-p")) {
    throw new UsageError(
      "Passwords are never taken from the command line (shell history, ps): pipe it on stdin or type it at the prompt.",
    );
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split("\n")[0]}`);
  }
  const { values, positionals } = parsed;
  const [kind, ...extra] = positionals;
  if (extra.length)
    throw new UsageError(
      `Unexpected ${JSON.stringify(extra[0])}: options take the form --name value.`,
    );
  switch (kind) {
    case "create-user":
      return {
        kind,
        email: required(values, "email"),
        name: required(values, "name"),
        role: role(required(values, "role")),
        tenantId: values.tenant,
      };
    case "set-password":
    case "revoke-sessions":
      return { kind, email: required(values, "email") };
    case "create-token":
      return { kind, email: required(values, "email"), label: required(values, "label") };
    case "create-tenant":
      return { kind, id: required(values, "id"), name: required(values, "name") };
    case undefined:
      throw new UsageError(`Name a command: ${COMMANDS}.`);
    default:
      throw new UsageError(`Unknown command ${JSON.stringify(kind)}: use ${COMMANDS}.`);
  }
}

/** Whether the command needs a password (read from stdin or a prompt). */
export const needsPassword = (command: Command) =>
  command.kind === "create-user" || command.kind === "set-password";

const sessions = (n: number) => `${n} session${n === 1 ? "" : "s"}`;

/**
 * Runs a parsed command; what it prints is `out` on stdout (the token alone, for scripts) and
 * `note` on stderr. AccountError carries a one-sentence refusal.
 */
export async function runCommand(
  db: Db,
  command: Command,
  readPassword: () => Promise<string>,
): Promise<{ out: string; note?: string }> {
  switch (command.kind) {
    case "create-user": {
      const user = await createUser(db, { ...command, password: await readPassword() });
      const what =
        command.role === "ADMIN" ? "operator (admin)" : `user of tenant ${command.tenantId}`;
      return {
        out: `Created ${what} ${user.email}: sign in at /signin with this address and the password.`,
      };
    }
    case "set-password": {
      const ended = await setPassword(db, { email: command.email, password: await readPassword() });
      return { out: `Password of ${command.email} changed; ${sessions(ended)} ended.` };
    }
    case "revoke-sessions":
      return { out: `${sessions(await revokeSessions(db, command))} of ${command.email} ended.` };
    case "create-token": {
      const token = await createApiToken(db, command);
      return {
        out: token,
        note: "Shown once: only its hash is stored. Send it as Authorization: Bearer <token>.",
      };
    }
    case "create-tenant":
      await createTenant(db, command);
      return { out: `Created tenant ${command.id}.` };
    default: {
      const unreachable: never = command;
      throw new Error(`unknown command ${JSON.stringify(unreachable)}`);
    }
  }
}

export { AccountError };
