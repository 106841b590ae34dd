// The payment provider as the shop sees it: an HTTP API somewhere else (services/provider in
// development, tests and the soak; a real processor in production). The shop holds no provider
// books of its own: it charges with POST /v1/charges under the intent's idempotency key, and
// reconciliation reads the provider's records through its list API, GET /v1/charges. Every call
// carries the shop's secret key (`Authorization: Bearer <key>`), as card processors require; the
// provider knows the shop by it, and keys, charges and lists are that shop's own.
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

/** How much of the provider's answer one list call may cost (reconciliation's budget). */
export interface ListLimits {
  /**
   * The most bytes of a page's body to read: past it, reading stops and the call fails with
   * ProviderPageTooLargeError, whatever the provider goes on sending.
   */
  maxBytes?: number;
  /** Ends the call, its body included (the run's deadline). */
  signal?: AbortSignal;
}

export interface ChargePage {
  data: ListedCharge[];
  hasMore: boolean;
  /** The page's body as read, in bytes. */
  bytes: number;
}

/** What the outbox worker needs from a provider (and reconciliation, its list). */
export interface PaymentProvider {
  charge(request: ChargeRequest): Promise<Charge>;
  listCharges(query: ChargeListQuery, limits?: ListLimits): Promise<ChargePage>;
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

/**
 * A list page larger than the reader's byte cap: the body was not read past the cap (a provider
 * that answers a gigabyte costs the caller the cap, not the gigabyte).
 */
export class ProviderPageTooLargeError extends Error {
  override name = "ProviderPageTooLargeError";
  constructor(readonly maxBytes: number) {
    super(`the payment provider's list page is larger than ${maxBytes} bytes: not read further`);
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

/**
 * The shop's client for the provider at `baseUrl`, calling with `secretKey` (the shop's
 * PAYMENTS_PROVIDER_SECRET_KEY).
 */
export function createProviderClient(
  baseUrl: string,
  secretKey: string,
  options: { timeoutMs?: number } = {},
): PaymentProvider {
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const authorization = `Bearer ${secretKey}`;
  const call: Call = (path, init, signal) =>
    callProvider(
      baseUrl,
      path,
      { ...init, headers: { ...(init.headers as Record<string, string>), authorization } },
      signal
        ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs),
    );
  return {
    charge: (request) => postCharge(call, request),
    listCharges: (query, limits) => getCharges(call, query, limits),
  };
}

/** One request to the provider: its answer when 2xx, else the error that says what to do next. */
type Call = (path: string, init: RequestInit, signal?: AbortSignal) => Promise<Response>;

async function callProvider(
  baseUrl: string,
  path: string,
  init: RequestInit,
  signal: AbortSignal,
): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(new URL(path, baseUrl), { ...init, signal });
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
  limits: ListLimits = {},
): Promise<ChargePage> {
  const params = new URLSearchParams();
  if (query.createdGte !== undefined) params.set("created[gte]", String(query.createdGte));
  if (query.createdLt !== undefined) params.set("created[lt]", String(query.createdLt));
  if (query.startingAfter !== undefined) params.set("starting_after", query.startingAfter);
  if (query.idempotencyKey !== undefined) params.set("idempotency_key", query.idempotencyKey);
  params.set("limit", String(query.limit ?? 100));
  const res = await call(`/v1/charges?${params}`, { method: "GET" }, limits.signal);
  const body = await readBody(res, limits.maxBytes ?? Infinity);
  const list = chargeList.parse(JSON.parse(body.toString("utf8")));
  return { data: list.data, hasMore: list.has_more, bytes: body.length };
}

/**
 * A response's body, read chunk by chunk and given up (the connection cancelled) as soon as it
 * passes `maxBytes`: a declared Content-Length over the cap is refused before reading anything.
 * A body that stalls ends with the call's signal (its timeout, or the caller's deadline).
 */
async function readBody(res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new ProviderPageTooLargeError(maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new ProviderPageTooLargeError(maxBytes);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof ProviderPageTooLargeError) throw error;
    // The body stopped coming: the deadline, the call's timeout or a dropped connection.
    throw new ProviderTimeoutError(
      `the payment provider's answer did not arrive whole: ${(error as Error).message}`,
    );
  } finally {
    reader.releaseLock();
  }
  return Buffer.concat(chunks, size);
}
