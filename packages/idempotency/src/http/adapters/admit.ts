// What the Express, Fastify and NestJS adapters share before the protocol: which requests need a
// key, the key, whose it is (the scope, read from the framework's own request), and the request's
// fingerprint from the body the framework already parsed.
import type { IncomingHttpHeaders } from "node:http";
import type { SqlTransaction } from "../../store/types.js";
import { fetchHeaders } from "../answer.js";
import { plainProblem as problem } from "../problem.js";
import { keyOrRefusal, type Exchange, type ProtectOptions, type Protection } from "../protect.js";
import { parsedRequestIdentity } from "../request-identity.js";

/** The options of every adapter: the HTTP layer's, and the scope read from `TRequest`. */
export interface AdapterOptions<TTx extends SqlTransaction, TRequest> extends ProtectOptions<TTx> {
  /**
   * Whose keys these are, from what your login put on the request (`req.user.id`,
   * `req.session.userId`, `request.user.sub`): never a value the client chooses. `undefined` for a
   * caller with no identity: the request is refused 401 before anything is recorded. To serve
   * anonymous callers, return an id your server issued them (an anonymous session's id).
   */
  scope: (request: TRequest) => string | undefined | null | Promise<string | undefined | null>;
}

/** What the adapters read of a framework's request. */
export interface ParsedRequest {
  method: string;
  /** The path and query the client sent (before any router mount). */
  url: string;
  headers: IncomingHttpHeaders;
  /** What the framework's body parser made of the body; undefined when none ran. */
  body?: unknown;
}

/** The request needs no key (its method is not protected): the framework goes on as usual. */
export const PASS = Symbol("pass");

/** Whether the request carries a body (one a parser should have read). */
function hasBody(headers: IncomingHttpHeaders): boolean {
  return headers["transfer-encoding"] !== undefined || Number(headers["content-length"] ?? 0) > 0;
}

/** The request's exchange, PASS, or its refusal (a bad key, no caller, a body nobody parsed). */
export async function admitParsed<TTx extends SqlTransaction, TRequest>(
  protection: Protection<TTx> & { options: AdapterOptions<TTx, TRequest> },
  request: TRequest,
  parsed: ParsedRequest,
): Promise<Exchange | Response | typeof PASS> {
  const method = parsed.method.toUpperCase();
  if (!protection.methods.has(method)) return PASS;
  const header = parsed.headers[protection.names.key.toLowerCase()];
  const key = keyOrRefusal(protection, Array.isArray(header) ? header.join(", ") : header);
  if (key instanceof Response) return key;
  const scope = await protection.options.scope(request);
  if (!scope)
    return problem(401, "Unauthorized", "This request needs a caller: its key is kept per caller");
  const contentType = parsed.headers["content-type"];
  if (parsed.body === undefined && hasBody(parsed.headers))
    return problem(
      415,
      "Unsupported Media Type",
      `No body parser read this ${contentType ?? "untyped"} body before the idempotency adapter (mount one before it, e.g. express.json())`,
    );
  const url = new URL(parsed.url, "http://localhost");
  const headers = fetchHeaders(parsed.headers);
  const input = parsedRequestIdentity(method, url, contentType, parsed.body);
  return { key, scope, method, url, headers, input };
}
