// Names for Prisma's statements, so pg prepares each one once per connection (PrismaPg's
// statementNameGenerator). A name is a hash of the SQL text: the same text always gets the same
// name, and pg refuses one name for two texts.
import { createHash } from "node:crypto";

/**
 * Distinct statements named per process. Prisma's statements are a small fixed set (one text per
 * query shape), but a caller that writes values into raw SQL text makes a new text each time, and
 * every prepared statement stays in its connection's memory until the connection closes. Past
 * this many, texts run unnamed (parsed each time, as without preparation) instead of growing
 * every connection without bound.
 */
export const MAX_NAMED_STATEMENTS = 1_000;

/** A name per SQL text; "" (pg's unnamed statement, parsed on every call) past `max` texts. */
export function statementNames(max = MAX_NAMED_STATEMENTS): (query: { sql: string }) => string {
  const names = new Map<string, string>();
  return ({ sql }) => {
    let name = names.get(sql);
    if (name === undefined && names.size < max) {
      name = `prisma_${createHash("sha256").update(sql).digest("hex").slice(0, 24)}`;
      names.set(sql, name);
    }
    return name ?? "";
  };
}
