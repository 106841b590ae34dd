// What to do with a key someone already holds: the protocol's decision, one case per rule
// (DESIGN, step 3), judged against the database's clock.
import type { EngineConfig } from "../config.js";
import { KeyStatus } from "../constants.js";
import type { RequestFingerprint } from "../fingerprint.js";
import type { KeyRecord } from "../store/types.js";

export type Decision =
  | { action: "replay"; record: KeyRecord }
  | { action: "mismatch"; record: KeyRecord }
  | { action: "wait"; record: KeyRecord; retryAfterSeconds: number }
  | { action: "take_over"; record: KeyRecord }
  | { action: "renew"; record: KeyRecord }
  | { action: "vanished" };

export function decide(
  existing: KeyRecord | null,
  print: RequestFingerprint,
  config: EngineConfig,
): Decision {
  if (!existing) return { action: "vanished" }; // released or reaped between our insert and read
  const now = existing.dbNow.getTime();
  if (existing.expiresAt.getTime() <= now) return { action: "renew", record: existing };
  if (!print.matches(existing.fingerprint)) return { action: "mismatch", record: existing };
  const status = existing.status;
  switch (status) {
    case KeyStatus.COMPLETED:
    case KeyStatus.FAILED:
      return { action: "replay", record: existing };
    case KeyStatus.PROCESSING: {
      const leaseLeftMs = (existing.leaseExpiresAt?.getTime() ?? 0) - now;
      if (leaseLeftMs <= 0) return { action: "take_over", record: existing };
      return {
        action: "wait",
        record: existing,
        retryAfterSeconds: retryAfter(leaseLeftMs, config),
      };
    }
    default: {
      const unreachable: never = status;
      throw new Error(`unknown key status ${String(unreachable)}`);
    }
  }
}

/**
 * A typical request finishes long before its lease ends: suggest coming back soon (2 s at most),
 * but never later than the moment the lease could be taken over.
 */
export function retryAfter(leaseLeftMs: number, config: EngineConfig): number {
  return Math.max(config.minRetryAfterSeconds, Math.min(Math.ceil(leaseLeftMs / 1000), 2));
}
