// The names of the headers the HTTP layer reads and writes, chosen per route. The defaults are the
// names most clients already know (Stripe's `Idempotent-Replayed`, which AWS Powertools and many
// SDKs read too); `"draft"` is the IETF draft's conformance profile in one word.
import { Header } from "./constants.js";

export interface HeaderNames {
  /** The request's key. */
  key: string;
  /** On a replay: `<name>: true`. */
  replayed: string;
  /** On a replay of an answer stored without its body: `<name>: omitted`. */
  bodyOmitted: string;
  /** On every answer: when the key's record expires (an HTTP date). */
  expires: string;
}

export const DEFAULT_HEADER_NAMES: Readonly<HeaderNames> = {
  key: Header.KEY,
  replayed: Header.REPLAYED,
  bodyOmitted: Header.REPLAY_BODY,
  expires: Header.EXPIRES,
};

/** The names the draft's conformance profile checks: `Idempotency-Replayed`, `Idempotency-Replay`. */
export const DRAFT_HEADER_NAMES: Readonly<HeaderNames> = {
  ...DEFAULT_HEADER_NAMES,
  replayed: "Idempotency-Replayed",
  bodyOmitted: "Idempotency-Replay",
};

/** A preset's name, or the names to change (the others keep their defaults). */
export type HeaderNamesOption = "default" | "draft" | Partial<HeaderNames>;

export function headerNamesOf(option: HeaderNamesOption = "default"): HeaderNames {
  if (option === "default") return { ...DEFAULT_HEADER_NAMES };
  if (option === "draft") return { ...DRAFT_HEADER_NAMES };
  return { ...DEFAULT_HEADER_NAMES, ...option };
}
