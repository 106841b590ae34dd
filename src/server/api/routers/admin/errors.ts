// The admin procedures' refusals: one reason per case, mapped to tRPC codes in one table. None is a
// 409 or 422: those statuses belong to the idempotency engine (DESIGN.md, "The HTTP contract"), so
// a client can tell "your admin request is still running" from "that key cannot be busted".
import { ReasonedError } from "../../trpc";

export const AdminReason = {
  KEY_NOT_FOUND: "key_not_found",
  KEY_LEASE_LIVE: "key_lease_live",
  KEY_NOT_STUCK: "key_not_stuck",
  OUTBOX_NOT_FOUND: "outbox_message_not_found",
  OUTBOX_NOT_DEAD: "outbox_message_not_dead",
} as const;
export type AdminReason = (typeof AdminReason)[keyof typeof AdminReason];

const CODE_BY_REASON = {
  key_not_found: "NOT_FOUND",
  key_lease_live: "PRECONDITION_FAILED",
  key_not_stuck: "PRECONDITION_FAILED",
  outbox_message_not_found: "NOT_FOUND",
  outbox_message_not_dead: "PRECONDITION_FAILED",
} as const satisfies Record<AdminReason, ReasonedError["code"]>;

export function adminError(reason: AdminReason, message: string): ReasonedError {
  return new ReasonedError(CODE_BY_REASON[reason], reason, message);
}
