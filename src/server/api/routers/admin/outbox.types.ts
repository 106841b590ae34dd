// Inputs of admin.outbox.*, and the rows they answer.
import { z } from "zod";
import { cursorSchema } from "./cursor";
import { reasonSchema } from "./keys.types";

export const outboxStatusSchema = z.enum(["PENDING", "DELIVERED", "DEAD"]);
export type OutboxStatus = z.infer<typeof outboxStatusSchema>;

export const listOutboxInput = z.object({
  status: outboxStatusSchema.optional(),
  cursor: cursorSchema.optional(),
  limit: z.number().int().min(1).max(200).default(50),
});

export const retryOutboxInput = z.object({ id: z.uuid(), reason: reasonSchema });

export interface OutboxView {
  id: string;
  topic: string;
  aggregateId: string;
  idempotencyKey: string;
  status: OutboxStatus;
  attempts: number;
  nextAttemptAt: string;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
}
