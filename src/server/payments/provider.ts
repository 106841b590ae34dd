// The payment provider as the shop sees it: an HTTP API somewhere else (services/provider in
// development, tests and the soak; a real processor in production). The shop holds no provider
// books of its own: it charges with POST /v1/charges under the intent's idempotency key, and
// reconciliation reads the provider's records through its list API, GET /v1/charges.
import { z } from "zod";

export const ChargeStatus = { SUCCEEDED: "SUCCEEDED", FAILED: "FAILED" } as const;
export type ChargeStatus = (typeof ChargeStatus)[keyof typeof ChargeStatus];

export const EventType = { SUCCEEDED: "charge.succeeded", FAILED: "charge.failed" } as const;
export type EventType = (typeof EventType)[keyof typeof EventType];

export interface ChargeRequest {
  /** The merchant's idempotency key: a repeat returns the first charge. */
  idempotencyKey: string;
  /** The merchant's order id. */
  reference: string;
  amountCents: number;
  currency: string;
}

export interface Charge {
  id: string;
  status: ChargeStatus;
  reference: string;
  amountCents: number;
  currency: string;
  /** True when the key had been seen: this is the first call's charge. */
  replayed: boolean;
}

/** A charge as the list API gives it; `created` in unix seconds. */
export type ListedCharge = Omit<Charge, "replayed"> & { created: number };

export interface ChargeListQuery {
  /** Only the charge made under this idempotency key (none or one). */
  idempotencyKey?: string;
  createdGte?: number;
  createdLt?: number;
  startingAfter?: string;
  limit?: number;
}

/** What the outbox worker needs from a provider (and reconciliation, its list). */
export interface PaymentProvider {
  charge(request: ChargeRequest): Promise<Charge>;
  listCharges(query: ChargeListQuery): Promise<{ data: ListedCharge[]; hasMore: boolean }>;
}

/**
 * Transient: the provider could not be reached or refused for now. Nothing was charged; retry with
 * the same key.
 */
export class ProviderUnavailableError extends Error {
  override name = "ProviderUnavailableError";
}

/**
 * Transient and the hard case: the request left, no answer came back. The charge may exist: retry
 * with the same key to learn it.
 */
export class ProviderTimeoutError extends Error {
  override name = "ProviderTimeoutError";
}

/**
 * The provider refused the request itself (a 4xx other than 408, 409 and 429): retrying the same
 * request cannot help. `type` is the provider's error type, e.g. `idempotency_error` (the key was
 * used before with other parameters).
 */
export class ProviderRefusedError extends Error {
  override name = "ProviderRefusedError";
  constructor(
    readonly status: number,
    readonly type: string | null,
    readonly reason: string,
  ) {
    super(`payment provider refused (${status}${type ? ` ${type}` : ""}): ${reason}`);
  }
}

/** The provider's error type for a key reused with other parameters (as card processors name it). */
export const KEY_REUSED = "idempotency_error";

/**
 * Answers that say "not now" rather than "no": a request that took too long (408), the same key
 * in flight in another request (409), too many requests (429), and any 5xx. Nothing was charged by
 * this request; the same key later gets the answer.
 */
const TRANSIENT = (status: number) => status >= 500 || [408, 409, 429].includes(status);

const providerError = z.object({
  error: z.object({ type: z.string(), message: z.string() }),
});

/**
 * How long one provider call may take. A card processor answers in well under a second; 10 s
 * rides out a slow moment, and stays far below the outbox lease (60 s), so a call is never still
 * in flight when another worker takes its row over.
 */
export const PROVIDER_TIMEOUT_MS = 10_000;

const charge = z.object({
  id: z.string(),
  status: z.enum([ChargeStatus.SUCCEEDED, ChargeStatus.FAILED]),
  reference: z.string(),
  amountCents: z.number().int(),
  currency: z.string(),
  created: z.number(),
});
const chargeList = z.object({ data: z.array(charge), has_more: z.boolean() });

/** Errors a refused connection reports: the request never reached the provider. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

export function createProviderClient(
  baseUrl: string,
  options: { timeoutMs?: number } = {},
): PaymentProvider {
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const call: Call = (path, init) => callProvider(baseUrl, path, init, timeoutMs);
  return {
    charge: (request) => postCharge(call, request),
    listCharges: (query) => getCharges(call, query),
  };
}

/** One request to the provider: its answer when 2xx, else the error that says what to do next. */
type Call = (path: string, init: RequestInit) => Promise<Response>;

async function callProvider(
  baseUrl: string,
  path: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(new URL(path, baseUrl), { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (error) {
    const code = ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (code && NOT_SENT.has(code))
      throw new ProviderUnavailableError(`payment provider unreachable (${code})`);
    // Sent, and no answer: a timeout or a dropped connection. The provider may have charged.
    throw new ProviderTimeoutError(
      `no answer from the payment provider: ${(error as Error).message}`,
    );
  }
  if (TRANSIENT(res.status)) {
    await res.arrayBuffer();
    throw new ProviderUnavailableError(`payment provider answered ${res.status}`);
  }
  if (!res.ok) throw await refusal(res);
  return res;
}

/** A refusal with the provider's own type and message when its body says them. */
async function refusal(res: Response): Promise<ProviderRefusedError> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const said = providerError.safeParse(body);
  return said.success
    ? new ProviderRefusedError(res.status, said.data.error.type, said.data.error.message)
    : new ProviderRefusedError(res.status, null, text.slice(0, 500));
}

async function postCharge(call: Call, request: ChargeRequest): Promise<Charge> {
  const res = await call("/v1/charges", {
    method: "POST",
    headers: { "content-type": "application/json", "idempotency-key": request.idempotencyKey },
    body: JSON.stringify({
      reference: request.reference,
      amountCents: request.amountCents,
      currency: request.currency,
    }),
  });
  const { created: _created, ...body } = charge.parse(await res.json());
  return { ...body, replayed: res.headers.get("idempotent-replayed") === "true" };
}

async function getCharges(
  call: Call,
  query: ChargeListQuery,
): Promise<{ data: ListedCharge[]; hasMore: boolean }> {
  const params = new URLSearchParams();
  if (query.createdGte !== undefined) params.set("created[gte]", String(query.createdGte));
  if (query.createdLt !== undefined) params.set("created[lt]", String(query.createdLt));
  if (query.startingAfter !== undefined) params.set("starting_after", query.startingAfter);
  if (query.idempotencyKey !== undefined) params.set("idempotency_key", query.idempotencyKey);
  params.set("limit", String(query.limit ?? 100));
  const list = chargeList.parse(
    await (await call(`/v1/charges?${params}`, { method: "GET" })).json(),
  );
  return { data: list.data, hasMore: list.has_more };
}
