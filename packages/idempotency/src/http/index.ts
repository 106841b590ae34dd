// @once/idempotency/http: any Fetch API handler (`Request → Response`) made idempotent in one call,
// without tRPC. See route.ts.
export {
  idempotent,
  type FetchHandler,
  type IdempotentRouteOptions,
  type RouteContext,
  type TransactionRouteContext,
} from "./route.js";
export { DEFAULT_REPLAYED_HEADERS } from "./answer.js";
export {
  DEFAULT_HEADER_NAMES,
  DRAFT_HEADER_NAMES,
  type HeaderNames,
  type HeaderNamesOption,
} from "../header-names.js";
export { problemResponse, PROBLEM_TYPE, type Problem } from "./problem.js";
// How long a request says it will wait (`Prefer: wait=N`): a server that bounds its requests in
// progress may queue such a request for a place rather than refuse it, or hold a duplicate of a
// request in flight until it ends; `Preference-Applied` for a wait it honoured.
export { parsePreferWait, preferenceApplied } from "../wait/prefer.js";
// Node's (req, res): node:http, Express, Fastify.
export {
  toNodeHandler,
  toRequest,
  writeResponse,
  type NodeHandler,
  type NodeHandlerOptions,
  type ToRequestOptions,
  type WriteResponseOptions,
} from "./node.js";
