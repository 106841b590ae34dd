// Fixtures for the admin tests: rows written directly, with literal times (leases relative to the
// database's now(), since that is what the lease state is judged against).
import { Prisma } from "@/generated/prisma/client";
import type pg from "pg";
import type { Db } from "@/server/db/client";
import { withDatabase as withClient } from "../../packages/idempotency/src/conformance/target";

export interface KeyFixture {
  scope?: string;
  key?: string;
  procedure?: string;
  status?: "PROCESSING" | "COMPLETED" | "FAILED";
  /** For PROCESSING: seconds from now() to the lease's end (negative: expired). */
  leaseSeconds?: number;
  createdAt?: string;
  responseStatus?: number;
  responseBody?: unknown;
  attempts?: number;
}

let n = 0;

export async function insertKey(
  db: Db,
  f: KeyFixture = {},
): Promise<{ id: string; scope: string; key: string }> {
  const status = f.status ?? "COMPLETED";
  const key = f.key ?? `fixture-${process.pid}-${++n}`;
  const scope = f.scope ?? "acme";
  const processing = status === "PROCESSING";
  const lease = processing
    ? Prisma.sql`now() + make_interval(secs => ${f.leaseSeconds ?? 30}::float8)`
    : Prisma.sql`NULL`;
  const token = processing ? Prisma.sql`gen_random_uuid()` : Prisma.sql`NULL`;
  const body = processing
    ? null
    : JSON.stringify(f.responseBody ?? { order: { id: "order-fixture" } });
  const rows = await db.$queryRaw<{ id: string }[]>`
    INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt",
      "attempts", "responseStatus", "responseBody", "createdAt", "completedAt", "expiresAt")
    VALUES (${scope}, ${key}, ${f.procedure ?? "checkout.placeOrder"}, ${"f".repeat(64)}, ${status}::"IdempotencyStatus",
      ${token}, ${lease}, ${f.attempts ?? 1}, ${processing ? null : (f.responseStatus ?? 200)}, ${body},
      ${f.createdAt ?? "2026-11-01T10:00:00.000Z"}::timestamptz, ${processing ? null : "2026-11-01T10:00:01.000Z"}::timestamptz,
      now() + interval '1 day')
    RETURNING "id"::text AS "id"`;
  return { id: rows[0]!.id, scope, key };
}

export async function insertOutbox(
  db: Db,
  f: { status?: "PENDING" | "DELIVERED" | "DEAD"; attempts?: number; createdAt?: string } = {},
) {
  return db.outboxMessage.create({
    data: {
      topic: "payment.charge",
      aggregateId: "00000000-0000-4000-8000-000000000001",
      idempotencyKey: `outbox-${++n}`,
      payload: { amountCents: 1450 },
      status: f.status ?? "DEAD",
      attempts: f.attempts ?? 8,
      lastError: f.status === "DELIVERED" ? null : "provider timed out",
      ...(f.createdAt ? { createdAt: new Date(f.createdAt) } : {}),
    },
  });
}

/**
 * A retry taking the key `id` over on a connection of its own (the database at `url`): its lease
 * renewed and its row locked, not yet committed, while `during` runs; then the takeover commits.
 */
export function whileTakenOver<T>(
  url: string,
  id: string,
  during: (other: pg.Client) => Promise<T>,
): Promise<T> {
  return withClient(url, async (other) => {
    await other.query("BEGIN");
    await other.query(
      `UPDATE "IdempotencyKey" SET "leaseExpiresAt" = now() + interval '1 minute', "attempts" = "attempts" + 1 WHERE "id" = $1`,
      [id],
    );
    const result = await during(other);
    await other.query("COMMIT");
    return result;
  });
}
