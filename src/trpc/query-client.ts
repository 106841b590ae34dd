import { QueryClient } from "@tanstack/react-query";
import { recoveryInterval } from "./store-status";

export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      // A query that failed because the shop cannot reach its database asks again every few
      // seconds, so the page recovers by itself once the database is back
      // (src/trpc/store-status.ts).
      queries: { staleTime: 5_000, retry: 1, refetchInterval: recoveryInterval },
      // Mutations are retried by the idempotency link (same key); React Query must not add its own.
      mutations: { retry: false },
    },
  });
}
