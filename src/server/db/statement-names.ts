// Names for Prisma's statements, so pg prepares each one once per connection (PrismaPg's
// statementNameGenerator). A name is a hash of the SQL text: the same text always gets the same
// name, and pg refuses one name for two texts.
import { createHash } from "node:crypto";

/**
 * Distinct statements named per process. Prisma's are a small fixed set, but values written into
 * raw SQL make a new text each time, and a prepared statement lives as long as its connection:
 * past this many, texts run unnamed instead of growing every connection without bound.
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
