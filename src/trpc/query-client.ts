import { QueryClient } from "@tanstack/react-query";

export function makeQueryClient() {
  return new QueryClient({
    defaultOptions: {
      queries: { staleTime: 5_000, retry: 1 },
      // Mutations are retried by the idempotency link (same key); React Query must not add its own.
      mutations: { retry: false },
    },
  });
}
