// Keyset cursors on (createdAt, id), opaque to the client: "<ISO time>|<uuid>". createdAt has
// millisecond precision in the database (timestamptz(3)), so the round trip through a JS Date is
// exact.
import { z } from "zod";
import { text } from "@/shared/text";

type Cursor = { createdAt: Date; id: string };

export const cursorSchema = text()
  .max(100)
  .transform((value, ctx): Cursor => {
    const [time, id] = value.split("|");
    const createdAt = new Date(time ?? "");
    if (!id || !z.guid().safeParse(id).success || Number.isNaN(createdAt.getTime())) {
      ctx.addIssue({ code: "custom", message: "Invalid cursor" });
      return z.NEVER;
    }
    return { createdAt, id };
  });

export function encodeCursor(cursor: Cursor | null): string | null {
  return cursor ? `${cursor.createdAt.toISOString()}|${cursor.id}` : null;
}

export const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** The rows past a cursor, newest first on (createdAt, id). */
export function before(c: Cursor | undefined) {
  return c
    ? { OR: [{ createdAt: { lt: c.createdAt } }, { createdAt: c.createdAt, id: { lt: c.id } }] }
    : {};
}

/** One page of rows read with `take: limit + 1`: the extra row says a next page exists. */
export function page<T extends Cursor>(rows: T[], limit: number) {
  const items = rows.slice(0, limit);
  return { items, nextCursor: rows.length > limit ? encodeCursor(items.at(-1) ?? null) : null };
}
