// The admin procedures' refusals, as the app's one error class. None is a 409 or 422: those
// statuses belong to the idempotency engine (DESIGN: "The HTTP contract"), so a client can tell
// "your admin request is still running" from "that key cannot be busted".
import { AppError } from "@/shared/app-error";
import { Reason } from "@/shared/reasons";

export const AdminReason = {
  KEY_NOT_FOUND: Reason.KEY_NOT_FOUND,
  KEY_LEASE_LIVE: Reason.KEY_LEASE_LIVE,
  KEY_NOT_STUCK: Reason.KEY_NOT_STUCK,
  OUTBOX_NOT_FOUND: Reason.OUTBOX_NOT_FOUND,
  OUTBOX_NOT_DEAD: Reason.OUTBOX_NOT_DEAD,
  SESSION_NOT_FOUND: Reason.SESSION_NOT_FOUND,
  FINDING_NOT_FOUND: Reason.NOT_FOUND,
} as const;
export type AdminReason = (typeof AdminReason)[keyof typeof AdminReason];

export function adminError(reason: AdminReason, message: string): AppError {
  return new AppError(reason, message);
}
