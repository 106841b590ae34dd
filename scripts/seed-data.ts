// What the scale seeds make up: five tenants and three procedures, shared by the keys
// (seed-keys.ts) and the dashboard's history (seed-dashboard.ts) so their rows agree.
export const SEED_TENANTS = ["acme", "globex", "initech", "umbrella", "hooli"] as const;
/** checkout.placeOrder 90 %, orders.cancel 9 %, admin.keys.bust 1 % (a rare procedure). */
export const SEED_PROCEDURES = {
  common: "checkout.placeOrder",
  some: "orders.cancel",
  rare: "admin.keys.bust",
} as const;
