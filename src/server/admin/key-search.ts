// Finding a key by its value: what an operator has in an incident is the Idempotency-Key a client
// sent (from a log line or a support ticket), not the row's id. Matches the value exactly or by its
// start, across tenants or within one.
import { z } from "zod";
import { Prisma } from "@/generated/prisma/client";
import { likePrefix, LIST_COLUMNS, type KeyListRow, type Queryable } from "./keys-query";

/**
 * Keys whose value starts with `prefix` (an exact match first), at most `limit`. `USING ~<~` is
 * the order of the text_pattern_ops index IdempotencyKey_key_idx, so PostgreSQL reads the LIKE
 * range in index order and stops after `limit` rows, however many keys share the prefix.
 */
export function keySearchQuery(
  prefix: string,
  scope: string | undefined,
  limit: number,
): Prisma.Sql {
  const inScope = scope ? Prisma.sql`AND "scope" = ${scope}` : Prisma.empty;
  return Prisma.sql`SELECT ${LIST_COLUMNS} FROM "IdempotencyKey"
    WHERE "key" LIKE ${likePrefix(prefix)} ${inScope}
    ORDER BY "key" USING ~<~, "scope" LIMIT ${limit}`;
}

export async function searchKeys(
  db: Queryable,
  prefix: string,
  scope: string | undefined,
  limit: number,
): Promise<{ items: KeyListRow[]; more: boolean }> {
  const rows = await db.$queryRaw<KeyListRow[]>(keySearchQuery(prefix, scope, limit + 1));
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

/**
 * What `/admin/keys/<ref>` names: a row id (the dashboard's links) or a key's value (pasted),
 * within one tenant or all. A value may itself be a UUID, so a UUID is looked up both ways.
 */
export async function resolveKeyRef(
  db: Queryable,
  ref: string,
  scope: string | undefined,
): Promise<KeyListRow[]> {
  const byId = z.guid().safeParse(ref).success ? Prisma.sql`OR "id" = ${ref}::uuid` : Prisma.empty;
  const inScope = scope ? Prisma.sql`AND "scope" = ${scope}` : Prisma.empty;
  return db.$queryRaw<KeyListRow[]>(Prisma.sql`SELECT ${LIST_COLUMNS} FROM "IdempotencyKey"
    WHERE ("key" = ${ref} ${byId}) ${inScope} ORDER BY "scope" LIMIT 50`);
}
