// What the scale seeds make up, shared by the keys (seed-keys.ts) and the dashboard's history
// (seed-dashboard.ts) so their rows agree. Every procedure named here is a mutation of the app's
// router under the scope that really uses it (scripts/seed-truth.test.ts walks the router): a
// tenant's keys are its checkouts; operators' keys are scoped "admin" and name admin mutations.
export const SEED_TENANTS = ["acme", "globex", "initech", "umbrella", "hooli"] as const;
/** The scope the engine gives an operator's keys (src/server/api/trpc.ts). */
export const ADMIN_SCOPE = "admin";
/** A tenant's one idempotent mutation. */
export const TENANT_PROCEDURE = "checkout.placeOrder";
/** Operators' idempotent mutations, the ones a quiet day sees. */
export const ADMIN_PROCEDURES = [
  "admin.keys.bust",
  "admin.keys.release",
  "admin.keys.releaseStuck",
  "admin.outbox.retry",
] as const;

/** Every (scope, procedure) the seeds write: each tenant's checkouts, the operators' actions. */
export const SEED_PAIRS: { scope: string; procedure: string }[] = [
  ...SEED_TENANTS.map((scope) => ({ scope, procedure: TENANT_PROCEDURE })),
  ...ADMIN_PROCEDURES.map((procedure) => ({ scope: ADMIN_SCOPE, procedure })),
];
