// The provider signs every webhook it sends, as Stripe does: header `simpay-signature: t=<unix
// seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, keyed with the secret both sides share. The
// webhook trusts a body only if one v1 matches (compared in constant time, so timing tells an
// attacker nothing about how close a guess was) and `t` is within the tolerance of our clock (so a
// captured request cannot be replayed later). Several v1 entries may appear while a secret rotates.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "simpay-signature";

/**
 * Five minutes either way: enough for the clock skew between two well-run servers and a retry in
 * flight, short enough that a leaked request is useless soon after (Stripe's default too).
 */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export const SignatureRefusal = {
  webhook_signature_missing: "The request carries no simpay-signature header",
  webhook_signature_invalid: "The simpay-signature header does not match the body",
  webhook_signature_stale: "The simpay-signature timestamp is outside the tolerance",
} as const;
export type SignatureReason = keyof typeof SignatureRefusal;

export type SignatureCheck = { ok: true } | { ok: false; reason: SignatureReason; message: string };

const SHA256_HEX = /^[0-9a-f]{64}$/;

function mac(secret: string, timestamp: string, rawBody: Uint8Array | string): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
}

/** The header the provider sends with `rawBody` at `timestampSeconds`. */
export function signatureHeader(
  secret: string,
  rawBody: Uint8Array | string,
  timestampSeconds: number,
): string {
  const t = String(Math.floor(timestampSeconds));
  return `t=${t},v1=${mac(secret, t, rawBody).toString("hex")}`;
}

const refuse = (reason: SignatureReason): SignatureCheck => ({
  ok: false,
  reason,
  message: SignatureRefusal[reason],
});

export function verifySignature(
  header: string | null,
  rawBody: Uint8Array,
  secret: string,
  options: { nowSeconds: number; toleranceSeconds?: number },
): SignatureCheck {
  if (header === null || header.trim() === "") return refuse("webhook_signature_missing");
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(",")) {
    const [name, value = ""] = part.trim().split("=", 2);
    if (name === "t" && /^\d{1,12}$/.test(value)) timestamp = value;
    if (name === "v1" && SHA256_HEX.test(value)) signatures.push(Buffer.from(value, "hex"));
  }
  if (timestamp === undefined || signatures.length === 0)
    return refuse("webhook_signature_invalid");
  const expected = mac(secret, timestamp, rawBody);
  // Every candidate is compared (no early exit), each in constant time.
  let matched = false;
  for (const signature of signatures) matched = timingSafeEqual(signature, expected) || matched;
  if (!matched) return refuse("webhook_signature_invalid");
  const age = Math.abs(options.nowSeconds - Number(timestamp));
  if (age > (options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS))
    return refuse("webhook_signature_stale");
  return { ok: true };
}
