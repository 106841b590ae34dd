"use client";
// The browser's tRPC client: queries batched, mutations one per request (each carries its own
// Idempotency-Key, and a key on a batch of several mutations is refused). Mutations pass through
// the package's idempotency link first (@once/idempotency/client): it picks the key, retries with
// it and reports replays.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { idempotencyHeaders, idempotencyLink } from "@once/idempotency/client";
import { createTRPCClient, httpBatchLink, httpLink, splitLink } from "@trpc/client";
import type { inferRouterOutputs } from "@trpc/server";
import { createTRPCContext } from "@trpc/tanstack-react-query";
import { useState, type ReactNode } from "react";
import type { AppRouter } from "@/server/api/root";
import { MAX_BATCH_SIZE } from "@/shared/batch";
import { demoDelayHeaders, troubleFetch } from "./network-trouble";
import { recoveryInterval } from "./store-status";

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();
/** What each procedure answers, as the browser receives it (plain JSON: dates as strings). */
export type RouterOutputs = inferRouterOutputs<AppRouter>;

const makeQueryClient = () =>
  new QueryClient({
    defaultOptions: {
      // A query that failed because the shop cannot reach its database asks again every few
      // seconds, so the page recovers by itself once the database is back (store-status.ts).
      queries: { staleTime: 5_000, retry: 1, refetchInterval: recoveryInterval },
      // Mutations are retried by the idempotency link (same key); React Query must not add its own.
      mutations: { retry: false },
    },
  });

let browserQueryClient: QueryClient | undefined;
function getQueryClient() {
  if (typeof window === "undefined") return makeQueryClient();
  return (browserQueryClient ??= makeQueryClient());
}

function makeTRPCClient() {
  const url = "/api/trpc";
  return createTRPCClient<AppRouter>({
    links: [
      idempotencyLink<AppRouter>(),
      splitLink({
        condition: (op) => op.type === "mutation",
        true: httpLink({
          url,
          headers: ({ op }) => ({ ...idempotencyHeaders({ op }), ...demoDelayHeaders(op) }),
          fetch: troubleFetch,
        }),
        // Never more calls per request than the server takes (src/shared/batch.ts).
        false: httpBatchLink({ url, maxItems: MAX_BATCH_SIZE }),
      }),
    ],
  });
}

export function TRPCReactProvider({ children }: { children: ReactNode }) {
  const queryClient = getQueryClient();
  const [trpcClient] = useState(makeTRPCClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
