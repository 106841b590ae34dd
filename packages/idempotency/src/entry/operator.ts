// @once/idempotency/operator: what an admin dashboard, a CLI or a health check needs: repairs
// (bust, release), the key's states, the eviction channel, the store-failure classifier and the
// one answer to a store that could not serve (storeUnavailable, serverBusy, refusalHeaders), the
// status → tRPC code table.
export {
  removeKey,
  KeyRemoval,
  LeaseState,
  type RemoveKeyResult,
  type OperatorKeyRecord,
  type KeyTarget,
} from "../operator.js";
export { KeyStatus, CounterEvent } from "../constants.js";
export { EVICTION_CHANNEL, SETTLED_CHANNEL } from "../constants.js";
export {
  classifyStoreFailure,
  isStaleCatalog,
  isStoreUnavailable,
  retryAfterOf,
  StoreFailure,
  POOL_QUEUE_FULL,
} from "../store/unavailable.js";
export { parseIdempotencyKey, MAX_KEY_LENGTH, type ParsedKey } from "../key.js";
export { TRPC_CODE_BY_STATUS } from "../errors.js";
export { refusalHeaders, serverBusy, storeUnavailable } from "../store-refusal.js";
export { StoredFailure } from "../reason-of.js";
