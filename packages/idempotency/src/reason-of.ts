// One answer to "which reason does this error stand for?", so an app's errorFormatter is one line:
//   errorFormatter: ({ shape, error }) => ({ ...shape, data: { ...shape.data, reason:
//   reasonOf(error) } })
// It recognises the package's own errors by class (a refusal, a unique violation, a replayed
// failure), walking `cause`; for the app's own errors it takes a `reason` string they carry.
import { isMarked, mark } from "./brand.js";
import { IdempotencyError } from "./errors.js";

/** A deterministic failure as replayed: the first answer's reason, its own error class gone. */
export class StoredFailure extends Error {
  static [Symbol.hasInstance](value: unknown): boolean {
    return isMarked(value, "StoredFailure"); // from any copy of the package (brand.ts)
  }

  constructor(
    readonly reason: string | undefined,
    message: string,
    /** A unique violation's fields. */
    readonly fields?: string[],
  ) {
    super(message);
    this.name = "StoredFailure";
    mark(this, "StoredFailure");
  }
}

const MAX_DEPTH = 8;

/** The reason of `error` or of the first of its causes that has one. */
export function reasonOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Object && depth < MAX_DEPTH; depth++) {
    if (current instanceof IdempotencyError || current instanceof StoredFailure)
      return current.reason;
    const own = (current as { reason?: unknown }).reason;
    if (typeof own === "string") return own;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
