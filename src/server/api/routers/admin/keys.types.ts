// Inputs of admin.keys.*; the shapes they answer are view.ts's (dates as ISO strings: the wire is
// plain JSON).
import { z } from "zod";
import { KeyStatus } from "@once/idempotency/operator";
import { cursorSchema } from "./cursor";
import { text } from "@/shared/text";

/** The key's scope: a tenant id ("acme"), "admin", or "provider:<name>". */
const tenantSchema = text().trim().min(1).max(100).optional();
/** The start of the procedure's name ("checkout." finds checkout.placeOrder); a full name too. */
const procedurePrefixSchema = text().trim().min(1).max(200).optional();
/** Why: free text, written to the audit log with the operator's name. */
export const reasonSchema = text().trim().min(3, "Say why (at least 3 characters)").max(500);

export const listKeysInput = z.object({
  status: z.enum(KeyStatus).optional(),
  tenant: tenantSchema,
  procedure: procedurePrefixSchema,
  /** Only PROCESSING keys whose lease has expired. */
  stuck: z.boolean().optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const keyByIdInput = z.object({ id: z.uuid() });

/** A key's value as a client sent it (1–255 characters), or the start of one. */
const keyValueSchema = text().trim().min(1, "Type a key (or its start)").max(255);

export const searchKeysInput = z.object({
  q: keyValueSchema,
  tenant: tenantSchema,
  limit: z.number().int().min(1).max(100).default(50),
});

/** What /admin/keys/<ref> names: a row id or a key's value. */
export const resolveKeyInput = z.object({ ref: keyValueSchema, tenant: tenantSchema });

export const stuckCountInput = z.object({ tenant: tenantSchema, procedure: procedurePrefixSchema });
export const releaseStuckInput = stuckCountInput.extend({ reason: reasonSchema });

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
