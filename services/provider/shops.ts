// The provider's merchants ("shops") and how a caller proves it is one: a secret key per shop, sent
// as `Authorization: Bearer <key>` on every API call, as card processors (Stripe) take theirs. The
// key names the shop: its charges, its idempotency keys and its list are that shop's alone, and its
// events go to that shop's webhook, signed with that shop's secret.
//
// Configured by PROVIDER_SHOPS, a JSON array:
//   [{"id": "once", "secretKey": "sk_test_…", "webhook": {"url": "http://…", "secret": "…"}}]
// (webhook optional: without it that shop's events wait in the books).
import { createHash, timingSafeEqual } from "node:crypto";
import { z } from "zod";

/**
 * A secret key shorter than this is guessable; 32 printable characters of a random token are not
 * (the shop side asks the same of its own).
 */
export const MIN_SECRET_KEY_LENGTH = 32;

const shopSchema = z.object({
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "a shop id is 1–63 characters of a-z, 0-9, _ and -"),
  // Printable ASCII without spaces: it travels in a header.
  secretKey: z
    .string()
    .min(
      MIN_SECRET_KEY_LENGTH,
      `a shop's secretKey must be at least ${MIN_SECRET_KEY_LENGTH} characters`,
    )
    .regex(/^[\x21-\x7e]+$/, "a shop's secretKey is printable ASCII without spaces"),
  webhook: z.object({ url: z.url(), secret: z.string().min(1) }).optional(),
});
export type Shop = z.infer<typeof shopSchema>;

const shopsSchema = z
  .array(shopSchema)
  .min(1, "PROVIDER_SHOPS names no shop: nobody could call the provider")
  .refine((shops) => new Set(shops.map((s) => s.id)).size === shops.length, "two shops have one id")
  // A key must name one shop, or a call could not tell whose books it is about.
  .refine(
    (shops) => new Set(shops.map((s) => s.secretKey)).size === shops.length,
    "two shops have one secretKey",
  );

/** PROVIDER_SHOPS as text: the shops, or the sentence that says what is wrong with it. */
export function parseShops(
  text: string | undefined,
): { ok: true; shops: Shop[] } | { ok: false; message: string } {
  if (!text)
    return {
      ok: false,
      message:
        'PROVIDER_SHOPS is not set: a JSON array of the shops that may call the provider, e.g. [{"id":"once","secretKey":"<32+ random characters>"}]',
    };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, message: "PROVIDER_SHOPS is not JSON (a JSON array of shops)" };
  }
  const parsed = shopsSchema.safeParse(json);
  return parsed.success
    ? { ok: true, shops: parsed.data }
    : { ok: false, message: `PROVIDER_SHOPS: ${z.prettifyError(parsed.error)}` };
}

const digest = (text: string) => createHash("sha256").update(text).digest();

export type Authentication =
  { ok: true; shop: Shop } | { ok: false; reason: "missing" | "invalid" };

/**
 * The shop whose key an `Authorization` header carries. Every shop's key is compared, each in
 * constant time over its SHA-256 (equal lengths whatever was sent): how long the answer takes
 * says nothing about how much of a key was right.
 */
export function authenticator(shops: readonly Shop[]) {
  const known = shops.map((shop) => ({ shop, digest: digest(shop.secretKey) }));
  return (authorization: string | undefined): Authentication => {
    const match = /^Bearer ([\x21-\x7e]+)$/.exec(authorization ?? "");
    if (!match) return { ok: false, reason: "missing" };
    const presented = digest(match[1]!);
    let found: Shop | undefined;
    for (const k of known) if (timingSafeEqual(k.digest, presented)) found = k.shop;
    return found ? { ok: true, shop: found } : { ok: false, reason: "invalid" };
  };
}
