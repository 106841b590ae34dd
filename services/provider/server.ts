// The provider's HTTP API, shaped like a card processor's. Every /v1 call carries its shop's secret
// key (`Authorization: Bearer <key>`, shops.ts); without one, or with a key no shop has, it is a
// 401 and nothing is charged or listed. Keys, charges and cursors are the shop's own: another
// shop's idempotency key is another charge, and a shop lists only its own charges.
//   POST /v1/charges   {reference, amountCents, currency} with an Idempotency-Key header: the same
//                      key returns the first charge (header Idempotent-Replayed: true); the same
//                      key with other parameters is a 400. Now and then a 503 before charging
//                      (failureRate), or a charge followed by a dropped connection (timeoutRate):
//                      the caller never learns of a charge that happened and must retry with the
//                      key.
//   GET  /v1/charges   ?created[gte]=&created[lt]= (unix seconds) &starting_after=<charge id>
//                      &limit= (1–100, default 10): {object: "list", data, has_more}, oldest first.
//                      ?idempotency_key=<key>: only the charge made under that key (the merchant
//                      learns which charge holds a key it was refused with).
//   GET  /health       200 once the books are reachable (no key: it says nothing about anyone).
import http from "node:http";
import type pg from "pg";
import { z } from "zod";
import { charge, chargeExists, listCharges } from "./books";
import { authenticator, type Shop } from "./shops";

interface ProviderOptions {
  /** The shops that may call, each by its secret key. */
  shops: readonly Shop[];
  failureRate: number;
  timeoutRate: number;
  random?: () => number;
  /** Told after each new charge, so its event goes out at once instead of at the next poll. */
  onCharge?: () => void;
}

/** A charge request's body is a few dozen bytes; anything past 16 KiB is refused unread. */
const BODY_LIMIT_BYTES = 16 * 1024;
const MAX_LIST_LIMIT = 100;

const chargeBody = z.object({
  reference: z.string().min(1).max(255),
  amountCents: z.number().int().positive(),
  currency: z.string().regex(/^[A-Z]{3}$/),
});
const KEY = /^[\x21-\x7e]{1,255}$/;
const REPLAYED = { "idempotent-replayed": "true" };
const unixSeconds = z.coerce.number().int().min(0).optional();
const listQuery = z.object({
  "created[gte]": unixSeconds,
  "created[lt]": unixSeconds,
  starting_after: z.string().min(1).max(255).optional(),
  limit: z.coerce.number().int().min(1).max(MAX_LIST_LIMIT).default(10),
  idempotency_key: z.string().regex(KEY).optional(),
});

function answer(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const raw = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(raw),
    ...headers,
  });
  res.end(raw);
}
const error = (res: http.ServerResponse, status: number, type: string, message: string) =>
  answer(res, status, { error: { type, message } });

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_LIMIT_BYTES) throw new RangeError("body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

export function createProviderServer(pool: pg.Pool, options: ProviderOptions): http.Server {
  const provider: Provider = {
    pool,
    options,
    random: options.random ?? Math.random,
    authenticate: authenticator(options.shops),
  };
  return http.createServer((req, res) => {
    // The books unreachable (or any bug): a 503 the caller retries, never a charge half-told.
    dispatch(provider, req, res).catch((cause: unknown) => {
      if (res.headersSent) return void res.destroy();
      const message = `The provider's books are unavailable: ${(cause as Error).message}`;
      error(res, 503, "api_error", message);
    });
  });
}

/** What the handlers need: the books, and the simulation's settings. */
interface Provider {
  pool: pg.Pool;
  options: ProviderOptions;
  random: () => number;
  authenticate: ReturnType<typeof authenticator>;
}

async function dispatch(
  provider: Provider,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://provider");
  if (req.method === "GET" && url.pathname === "/health") {
    await provider.pool.query("SELECT 1");
    return answer(res, 200, { ok: true });
  }
  // The key before anything else, the route included: a caller without one learns nothing, and
  // its body is never read.
  const caller = provider.authenticate(req.headers.authorization);
  if (!caller.ok) {
    res.setHeader("www-authenticate", 'Bearer realm="simpay"');
    const message =
      caller.reason === "missing"
        ? "No API key provided: send your secret key as `Authorization: Bearer <key>`"
        : "Invalid API key provided";
    return error(res, 401, "authentication_error", message);
  }
  const route = `${req.method} ${url.pathname}`;
  switch (route) {
    case "POST /v1/charges":
      return postCharge(provider, caller.shop, req, res);
    case "GET /v1/charges":
      return getCharges(provider.pool, caller.shop, url, res);
    default:
      return error(res, 404, "invalid_request_error", `No route ${route}`);
  }
}

async function postCharge(
  { pool, options, random }: Provider,
  shop: Shop,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const key = req.headers["idempotency-key"];
  if (typeof key !== "string" || !KEY.test(key))
    return error(res, 400, "invalid_request_error", "An Idempotency-Key header is required");
  let body;
  try {
    body = chargeBody.safeParse(await readJson(req));
  } catch {
    return error(res, 400, "invalid_request_error", "The body is not JSON of at most 16 KiB");
  }
  if (!body.success) return error(res, 400, "invalid_request_error", z.prettifyError(body.error));
  if (random() < options.failureRate)
    return error(res, 503, "api_error", "Temporarily unavailable (simulated): nothing was charged");
  const outcome = await charge(pool, shop.id, key, body.data);
  const reused = "This Idempotency-Key was used with other parameters";
  if (outcome.kind === "key_reused") return error(res, 400, "idempotency_error", reused);
  if (outcome.kind === "created") options.onCharge?.();
  // Charged, and the answer is lost on the way: the caller sees its connection drop.
  if (random() < options.timeoutRate) return void res.socket?.destroy();
  answer(res, 200, outcome.charge, outcome.kind === "replayed" ? REPLAYED : {});
}

async function getCharges(
  pool: pg.Pool,
  shop: Shop,
  url: URL,
  res: http.ServerResponse,
): Promise<void> {
  const q = listQuery.safeParse(Object.fromEntries(url.searchParams));
  if (!q.success) return error(res, 400, "invalid_request_error", z.prettifyError(q.error));
  const startingAfter = q.data.starting_after;
  if (startingAfter !== undefined && !(await chargeExists(pool, shop.id, startingAfter)))
    return error(res, 400, "invalid_request_error", "starting_after names no charge");
  const page = await listCharges(pool, shop.id, {
    createdGte: q.data["created[gte]"],
    createdLt: q.data["created[lt]"],
    startingAfter,
    idempotencyKey: q.data.idempotency_key,
    limit: q.data.limit,
  });
  answer(res, 200, { object: "list", data: page.data, has_more: page.hasMore });
}
