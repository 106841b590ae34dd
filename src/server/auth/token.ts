import { createHash } from "node:crypto";

/** API tokens are stored as SHA-256 hashes: a leaked database does not leak working tokens. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
