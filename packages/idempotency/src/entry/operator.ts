// @once/idempotency/operator: what an admin dashboard, a CLI or a health check needs: repairs
// (bust, release), the key's states, the eviction channel, and the store-failure classifier.
export { removeKey, KeyRemoval, LeaseState, type RemoveKeyResult, type OperatorKeyRecord } from "../operator.js";
export { KeyStatus, CounterEvent } from "../constants.js";
export { EVICTION_CHANNEL, SETTLED_CHANNEL } from "../evictions.js";
export { classifyStoreFailure, isStoreUnavailable, StoreFailure } from "../store/unavailable.js";
export { parseIdempotencyKey, MAX_KEY_LENGTH, type ParsedKey } from "../key.js";
export { StoredFailure } from "../reason-of.js";
