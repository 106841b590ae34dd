// The NestJS app's login: a bearer token that names its user, signed so a client cannot forge
// another user's (what passport or @nestjs/jwt do in a real app).
import { createHmac, timingSafeEqual } from "node:crypto";

// The example's secret, as the other apps' are: a real app reads it from its configuration.
const SECRET = "example-only-secret";
const sign = (user: string) => createHmac("sha256", SECRET).update(user).digest("base64url");

export const tokenFor = (user: string) => `${user}.${sign(user)}`;

/** The user a token names, or undefined if it is not one we signed. */
export function userOf(token: string): string | undefined {
  const [user, signature = ""] = token.split(".");
  if (!user) return undefined;
  const expected = Buffer.from(sign(user));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected) ? user : undefined;
}
