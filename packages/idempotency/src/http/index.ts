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
export { problemResponse, PROBLEM_TYPE, type Problem } from "./problem.js";
