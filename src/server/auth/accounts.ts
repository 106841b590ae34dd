// Making accounts and API tokens (for the `npm run users` CLI). Every refusal is an AccountError
// whose message is one sentence an operator can act on.
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Db } from "../db/client";
import { hashPassword, passwordProblem } from "./password";
import { endSessionsOf } from "./session";
import { hashToken } from "./token";

export class AccountError extends Error {}

const email = z
  .email()
  .max(320)
  .transform((e) => e.trim().toLowerCase());
const TENANT_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

function checked<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new AccountError(
      `${what} is not valid: ${parsed.error.issues[0]?.message ?? "check it"}.`,
    );
  return parsed.data;
}

function checkPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new AccountError(problem);
}

export async function createTenant(db: Db, input: { id: string; name: string }): Promise<void> {
  if (!TENANT_ID.test(input.id))
    throw new AccountError("A tenant id is lower-case letters, digits and dashes (e.g. acme).");
  if (!input.name.trim()) throw new AccountError("Give the tenant a name (--name).");
  const created = await db.tenant.createMany({
    data: [{ id: input.id, name: input.name.trim() }],
    skipDuplicates: true,
  });
  if (created.count === 0) throw new AccountError(`Tenant ${input.id} already exists.`);
}

/** A tenant user needs its tenant; an admin acts for none. */
export async function createUser(
  db: Db,
  input: {
    email: string;
    name: string;
    role: "TENANT" | "ADMIN";
    tenantId?: string;
    password: string;
  },
): Promise<{ id: string; email: string }> {
  const address = checked(email, input.email, "The e-mail address");
  if (!input.name.trim()) throw new AccountError("Give the user a name (--name).");
  if (input.role === "TENANT" && !input.tenantId)
    throw new AccountError("A tenant user needs --tenant <id>.");
  if (input.role === "ADMIN" && input.tenantId)
    throw new AccountError("An admin acts for no tenant: leave out --tenant.");
  if (input.tenantId && !(await db.tenant.findUnique({ where: { id: input.tenantId } }))) {
    throw new AccountError(
      `Tenant ${input.tenantId} does not exist: create it first (npm run users -- create-tenant).`,
    );
  }
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  const rows = await db.user.createManyAndReturn({
    data: {
      email: address,
      name: input.name.trim(),
      role: input.role,
      tenantId: input.tenantId ?? null,
      passwordHash,
    },
    skipDuplicates: true,
    select: { id: true, email: true },
  });
  if (!rows[0]) throw new AccountError(`A user with the e-mail address ${address} already exists.`);
  return rows[0];
}

/** The real (non-demo) user with this address, or a one-sentence refusal. */
async function realUser(db: Db, address: string): Promise<{ id: string }> {
  const user = await db.user.findUnique({
    where: { email: checked(email, address, "The e-mail address") },
    select: { id: true, demo: true },
  });
  if (!user) throw new AccountError(`No user has the e-mail address ${address}.`);
  if (user.demo)
    throw new AccountError(`${address} is a demo account: demo accounts get no password or token.`);
  return user;
}

/** A new password; every session of the account ends with the old one. How many ended. */
export async function setPassword(
  db: Db,
  input: { email: string; password: string },
): Promise<number> {
  const user = await realUser(db, input.email);
  checkPassword(input.password);
  const passwordHash = await hashPassword(input.password);
  // One transaction: no session outlives the password it was opened with.
  const [, ended] = await db.$transaction([
    db.user.update({ where: { id: user.id }, data: { passwordHash } }),
    db.session.deleteMany({ where: { userId: user.id } }),
  ]);
  return ended.count;
}

/** Ends every session of the account (a lost laptop, a copied cookie). How many ended. */
export async function revokeSessions(db: Db, input: { email: string }): Promise<number> {
  const user = await realUser(db, input.email);
  return endSessionsOf(db, user.id);
}

/** A new API token for the user: returned once, stored only as its SHA-256 hash. */
export async function createApiToken(
  db: Db,
  input: { email: string; label: string },
): Promise<string> {
  const user = await realUser(db, input.email);
  if (!input.label.trim())
    throw new AccountError("Give the token a label (--label), e.g. the system that will use it.");
  // 32 random bytes: unguessable, so a fast hash (SHA-256) is enough to store it.
  const token = `once_${randomBytes(32).toString("base64url")}`;
  await db.apiToken.create({
    data: { tokenHash: hashToken(token), label: input.label.trim(), userId: user.id },
  });
  return token;
}
