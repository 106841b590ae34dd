// Every refusal of the HTTP layer as `application/problem+json` (RFC 9457): type, title, status,
// detail, and `reason`, the word a client branches on (the same one tRPC's error.data.reason has).
import type { IdempotencyError } from "../errors.js";
import { REASONS, type Reason } from "../reasons.js";
import { refusalHeaders } from "../store-refusal.js";

export const PROBLEM_TYPE = "application/problem+json";

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  reason: Reason;
  [extension: string]: unknown;
}

/**
 * The problem for `reason`. With `docs` (the address of a page that explains each reason under its
 * own anchor), `type` is that anchor and a `Link: rel="describedby"` points at it, as the IETF
 * draft advises; without, `type` is "about:blank".
 */
export function problemResponse(
  reason: Reason,
  detail: string,
  options: { status?: number; docs?: string; headers?: Headers; extensions?: object } = {},
): Response {
  const status = options.status ?? REASONS[reason].status;
  const type = options.docs ? `${options.docs}#${reason}` : "about:blank";
  const problem: Problem = {
    type,
    title: REASONS[reason].meaning,
    status,
    detail,
    reason,
    ...options.extensions,
  };
  const headers = new Headers(options.headers);
  headers.set("content-type", PROBLEM_TYPE);
  if (options.docs) headers.set("link", `<${type}>; rel="describedby"`);
  return new Response(JSON.stringify(problem), { status, headers });
}

/** A problem of the HTTP layer's own (not one of the engine's reasons). */
export function plainProblem(status: number, title: string, detail: string): Response {
  const body = JSON.stringify({ type: "about:blank", title, status, detail });
  return new Response(body, { status, headers: { "content-type": PROBLEM_TYPE } });
}

/** The engine's refusal as a problem, with Retry-After and Preference-Applied where they apply. */
export function refusal(error: IdempotencyError, docs: string | undefined): Response {
  const headers = refusalHeaders(error);
  return problemResponse(error.reason, error.message, { status: error.httpStatus, docs, headers });
}
