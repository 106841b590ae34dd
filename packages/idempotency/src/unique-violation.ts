// A handler's own write that hits a unique constraint (Prisma's P2002: a slug, an e-mail taken) is
// a deterministic conflict: the same request would hit it again. The engine stores it as
// `409 unique_violation` naming the constraint's fields and replays it, instead of releasing the
// key as for a transient failure. The violation rolls the business transaction back; its
// connection goes back to the pool unharmed (only a failed statement outside a transaction makes
// @prisma/adapter-pg discard one).
import { mark } from "./brand.js";
import { IdempotencyError } from "./errors.js";
import { Reason } from "./reasons.js";
import { jsonOutcome } from "./outcome.js";
import type { StoredResponse } from "./store/types.js";

const PRISMA_UNIQUE_VIOLATION = "P2002";
/** PostgreSQL's unique_violation, for a pg error that reaches the handler without Prisma. */
const SQLSTATE_UNIQUE_VIOLATION = "23505";
const MAX_DEPTH = 8;

export class UniqueViolationError extends IdempotencyError {
  static override readonly brand: string = "UniqueViolationError";

  constructor(
    /** The constraint's fields (columns); its index's name when they could not be found. */
    readonly fields: string[],
    cause?: unknown,
    /** The index's name, when the driver gave only that (Prisma's driver adapters). */
    readonly index?: string,
  ) {
    const named = fields.length > 0 ? ` on ${fields.join(", ")}` : "";
    super(
      Reason.UNIQUE_VIOLATION,
      `A unique constraint failed${named}: this conflicts with data that already exists`,
      { cause },
    );
    this.name = "UniqueViolationError";
    mark(this, UniqueViolationError.brand);
  }
}

type Loose =
  | { code?: unknown; meta?: unknown; cause?: unknown; constraint?: unknown; detail?: unknown }
  | null
  | undefined;

/** The unique violation behind `error` (the error itself or one of its causes), if there is one. */
export function uniqueViolationIn(error: unknown): UniqueViolationError | undefined {
  let current = error as Loose;
  for (let depth = 0; current && typeof current === "object" && depth < MAX_DEPTH; depth++) {
    if (current instanceof UniqueViolationError) return current;
    if (current.code === PRISMA_UNIQUE_VIOLATION) {
      const { fields, index } = prismaFields(current.meta);
      return new UniqueViolationError(
        fields.length > 0 ? fields : index ? [index] : [],
        current,
        fields.length > 0 ? undefined : index,
      );
    }
    if (current.code === SQLSTATE_UNIQUE_VIOLATION)
      return new UniqueViolationError(pgFields(current), current);
    current = current.cause as Loose;
  }
  return undefined;
}

/**
 * Prisma's classic engine puts the fields in `meta.target`; with a driver adapter (Prisma 7,
 * @prisma/adapter-pg) they are in `meta.driverAdapterError.cause.constraint.fields`, or only the
 * index's name in `….constraint.index`.
 */
function prismaFields(meta: unknown): { fields: string[]; index?: string } {
  const m = meta as
    | {
        target?: unknown;
        driverAdapterError?: { cause?: { constraint?: { fields?: unknown; index?: unknown } } };
      }
    | undefined;
  const strings = (v: unknown) =>
    Array.isArray(v)
      ? v.filter((x): x is string => typeof x === "string")
      : typeof v === "string"
        ? [v]
        : [];
  const target = strings(m?.target);
  if (target.length > 0) return { fields: target };
  const constraint = m?.driverAdapterError?.cause?.constraint;
  return { fields: strings(constraint?.fields), index: strings(constraint?.index)[0] };
}

/**
 * The violation with its fields named: @prisma/adapter-pg (7.10) reports only the index's name
 * (`constraint.index`), so its columns are read from the catalog. The index name stays if that
 * read fails: the answer is still a 409, stored and replayed.
 */
export async function withFieldsNamed(
  violation: UniqueViolationError,
  indexColumns?: (index: string) => Promise<string[]>,
): Promise<UniqueViolationError> {
  if (!violation.index || !indexColumns) return violation;
  const columns = await indexColumns(violation.index).catch(() => []);
  return columns.length > 0 ? new UniqueViolationError(columns, violation.cause) : violation;
}

/** pg's `detail` reads `Key ("slug")=(x) already exists.`; its `constraint` is the index's name. */
function pgFields(error: NonNullable<Loose>): string[] {
  const columns =
    typeof error.detail === "string" ? /^Key \((.+?)\)=/.exec(error.detail)?.[1] : undefined;
  if (columns) return columns.split(", ").map((c) => c.replace(/^"|"$/g, ""));
  return typeof error.constraint === "string" ? [error.constraint] : [];
}

/** The stored answer of a unique violation: the body every entry point replays. */
export function uniqueViolationResponse(violation: UniqueViolationError): StoredResponse {
  const { reason, message, fields } = violation;
  return jsonOutcome("deterministic", violation.httpStatus, { reason, message, fields }).response;
}
