// Inputs of admin.keys.*, and the shapes they answer (dates as ISO strings: the wire is plain JSON).
import { z } from "zod";
import { KeyStatus, type LeaseState } from "@once/idempotency";
import { cursorSchema } from "./cursor";

export const keyStatusSchema = z.enum([KeyStatus.PROCESSING, KeyStatus.COMPLETED, KeyStatus.FAILED]);

export const listKeysInput = z.object({
  status: keyStatusSchema.optional(),
  /** The key's scope: a tenant id ("acme"), "admin", or "provider:<name>". */
  tenant: z.string().trim().min(1).max(100).optional(),
  procedure: z.string().trim().min(1).max(200).optional(),
  /** Only PROCESSING keys whose lease has expired. */
  stuck: z.boolean().optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});
export type ListKeysInput = z.input<typeof listKeysInput>;

export const keyByIdInput = z.object({ id: z.uuid() });

/** Why: free text, written to the audit log with the operator's name. */
export const reasonSchema = z.string().trim().min(3, "Say why (at least 3 characters)").max(500);

export const removeKeyInput = z.object({ id: z.uuid(), reason: reasonSchema });
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
  reason: string;
  details: unknown;
  createdAt: string;
}

export interface RemoveKeyResult {
  action: "bust" | "release";
  key: { id: string; tenant: string; key: string; procedure: string; status: KeyStatus };
  auditId: string;
}
