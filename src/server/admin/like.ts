// LIKE patterns from what an operator typed: `%`, `_` and `\` in a key or procedure name are
// matched literally (PostgreSQL's default LIKE escape is the backslash).

/** `value` as the start of a LIKE pattern: matches every string that begins with `value`. */
export function likePrefix(value: string): string {
  return `${value.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
