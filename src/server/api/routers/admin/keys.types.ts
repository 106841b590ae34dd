// Inputs of admin.keys.*, and the shapes they answer (dates as ISO strings: the wire is plain
// JSON).
import { z } from "zod";
import { KeyStatus } from "@once/idempotency/operator";
import type { LeaseState } from "@/server/admin/keys-query";
import type { TimelineEvent } from "@/server/admin/timeline";
import { cursorSchema } from "./cursor";
import { text } from "@/shared/text";

export const keyStatusSchema = z.enum([
  KeyStatus.PROCESSING,
  KeyStatus.COMPLETED,
  KeyStatus.FAILED,
]);

export const listKeysInput = z.object({
  status: keyStatusSchema.optional(),
  /** The key's scope: a tenant id ("acme"), "admin", or "provider:<name>". */
  tenant: text().trim().min(1).max(100).optional(),
  /**
   * The start of the procedure's name ("checkout." finds checkout.placeOrder); a full name matches
   * too.
   */
  procedure: text().trim().min(1).max(200).optional(),
  /** Only PROCESSING keys whose lease has expired. */
  stuck: z.boolean().optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type ListKeysInput = z.input<typeof listKeysInput>;

export const keyByIdInput = z.object({ id: z.uuid() });

/** A key's value as a client sent it (1–255 characters), or the start of one. */
const keyValueSchema = text().trim().min(1, "Type a key (or its start)").max(255);
const tenantSchema = text().trim().min(1).max(100).optional();

export const searchKeysInput = z.object({
  q: keyValueSchema,
  tenant: tenantSchema,
  limit: z.number().int().min(1).max(100).default(50),
});

/** What /admin/keys/<ref> names: a row id or a key's value. */
export const resolveKeyInput = z.object({ ref: keyValueSchema, tenant: tenantSchema });

export const stuckCountInput = z.object({
  tenant: tenantSchema,
  procedure: text().trim().min(1).max(200).optional(),
});

export const releaseStuckInput = stuckCountInput.extend({
  reason: text().trim().min(3, "Say why (at least 3 characters)").max(500),
});
export type ReleaseStuckInput = z.input<typeof releaseStuckInput>;

/** Why: free text, written to the audit log with the operator's name. */
export const reasonSchema = text().trim().min(3, "Say why (at least 3 characters)").max(500);

/**
 * `tenant`, where the caller knows it (the dashboard does): the delete then names the key's scope,
 * so a key table partitioned or distributed by scope is read in one place (docs/scale.md); a key
 * of another tenant is not found.
 */
export const removeKeyInput = z.object({
  id: z.uuid(),
  tenant: tenantSchema,
  reason: reasonSchema,
});
export type RemoveKeyInput = z.input<typeof removeKeyInput>;

export interface KeySummary {
  id: string;
  tenant: string;
  key: string;
  procedure: string;
  status: KeyStatus;
  attempts: number;
  leaseState: LeaseState;
  leaseExpiresAt: string | null;
  /** Lease end − the database's clock when read, in ms; negative: expired that long ago. */
  leaseRemainingMs: number | null;
  createdAt: string;
  completedAt: string | null;
  expiresAt: string;
  responseStatus: number | null;
}

export interface KeyDetail extends KeySummary {
  fingerprint: string;
  leaseToken: string | null;
  /** The stored answer's exact text, as sent. */
  responseBody: string | null;
  responseContentType: string | null;
  updatedAt: string;
  /** The database's clock when read: the lease state is judged against it. */
  dbNow: string;
}

export interface AuditView {
  id: string;
  actor: string;
  action: string;
  targetType: string;
  targetId: string;
  /** For a key: its tenant and value (the row id alone dies with a bust). */
  targetScope: string | null;
  targetKey: string | null;
  reason: string;
  details: unknown;
  createdAt: string;
}

export interface RemoveKeyResult {
  action: "bust" | "release";
  key: { id: string; tenant: string; key: string; procedure: string; status: KeyStatus };
  auditId: string;
}

export interface KeyById {
  key: KeyDetail | null;
  audit: AuditView[];
  timeline: TimelineEvent[];
}

export interface ReleaseStuckResult {
  released: number;
  /** Stuck keys the filters still select after this batch (call again to release them). */
  remaining: number;
  /** The first few released keys, for the operator's feedback. */
  sample: { id: string; tenant: string; key: string }[];
}
