// Passwords are stored with scrypt (memory-hard: a leaked table costs an attacker memory as well
// as time per guess), each with its own random salt and the parameters it was made with, so the
// cost can be raised later without invalidating existing hashes:
//
//   scrypt$N=32768,r=8,p=1$<salt, base64url>$<hash, base64url>
import {
  randomBytes,
  scrypt as scryptCallback,
  timingSafeEqual,
  type ScryptOptions,
} from "node:crypto";

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    scryptCallback(password, salt, keylen, options, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

/**
 * N = 2^15, r = 8: 32 MiB and ~0.1 s per hash here, OWASP's floor for scrypt. A sign-in pays it
 * once; a guesser with the table pays it per guess. p = 1 keeps it one core.
 */
export const SCRYPT_PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
const SALT_BYTES = 16;
/** Node refuses scrypt above 32 MiB by default; 128·N·r is exactly 32 MiB, so allow headroom. */
const MAX_MEMORY = 64 * 1024 * 1024;
/** Bounds for parameters read back from the database: a tampered row must not hang the server. */
const MAX_N = 2 ** 20;

/** Passwords are 12 to 1024 characters: long enough to resist guessing, short enough to hash. */
export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 1024;

/** Why a password cannot be used, as one sentence; null when it is fine. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN_LENGTH)
    return `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (password.length > PASSWORD_MAX_LENGTH)
    return `The password must have at most ${PASSWORD_MAX_LENGTH} characters.`;
  return null;
}

export async function hashPassword(password: string): Promise<string> {
  const problem = passwordProblem(password);
  if (problem) throw new Error(problem);
  const { N, r, p } = SCRYPT_PARAMS;
  const salt = randomBytes(SALT_BYTES);
  const hash = await scrypt(password, salt, KEY_LENGTH, { N, r, p, maxmem: MAX_MEMORY });
  return `scrypt$N=${N},r=${r},p=${p}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

function parse(stored: string) {
  const match = /^scrypt\$N=(\d+),r=(\d+),p=(\d+)\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!match) return null;
  const [N, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const powerOfTwo = N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || r < 1 || r > 32 || p < 1 || p > 16) return null;
  const bytes = (i: number) => Buffer.from(match[i]!, "base64url");
  return { N, r, p, salt: bytes(4), hash: bytes(5) };
}

/** Whether `password` matches the stored hash; compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed || parsed.hash.length === 0 || password.length > PASSWORD_MAX_LENGTH) return false;
  const { N, r, p } = parsed;
  const maxmem = Math.max(MAX_MEMORY, 256 * N * r);
  const candidate = await scrypt(password, parsed.salt, parsed.hash.length, { N, r, p, maxmem });
  return timingSafeEqual(candidate, parsed.hash);
}

/**
 * A hash of nothing anybody knows, verified when the account does not exist (or has no
 * password), so that "no such account" takes as long as "wrong password" and the timing does not
 * tell an attacker which e-mail addresses have accounts.
 */
let decoy: Promise<string> | undefined;
export async function verifyAgainstDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(24).toString("base64url"));
  await verifyPassword(password, await decoy);
  return false;
}
