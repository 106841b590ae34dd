// Text PostgreSQL can store. A `text` column refuses NUL (SQLSTATE 22021, which used to surface as
// a 500 from every admin filter), and a lone UTF-16 surrogate has no UTF-8 form at all (the driver
// would quietly store U+FFFD instead of what was sent). Every text field of every input schema is
// `text()`, so such input is a 400 `invalid_input` at the schema, before any query.
import { z } from "zod";

// eslint-disable-next-line no-control-regex -- NUL is the point
const STORABLE = /^[^\u0000\p{Cs}]*$/u;

export const UNSTORABLE_TEXT_MESSAGE = "Text may not contain NUL characters or unpaired surrogates";

/** Whether PostgreSQL can store `value` as sent (for inputs that are not read through zod). */
export function isStorableText(value: string): boolean {
  return STORABLE.test(value);
}

/** A string field of an input schema: `text().trim().max(100)` wherever `z.string()` would be. */
export function text() {
  return z.string().regex(STORABLE, UNSTORABLE_TEXT_MESSAGE);
}
