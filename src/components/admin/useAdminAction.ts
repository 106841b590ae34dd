"use client";
// An admin action (bust, release, retry) as an idempotent mutation: one Idempotency-Key per intent
// (the package's useIdempotency: kept until the server gives a final answer), so a double-click or
// the link's retry after a lost response sends the same key and the server acts once; the next
// action gets a new key.
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { IdempotencyContext } from "@once/idempotency/client";
import { useIdempotency } from "@once/idempotency/client/react";

export function useAdminAction<TInput, TResult>(
  send: (input: TInput, context: IdempotencyContext) => Promise<TResult>,
) {
  const queryClient = useQueryClient();
  const idempotency = useIdempotency();
  return useMutation({
    mutationFn: (input: TInput) => send(input, idempotency.trpc.context),
    onSettled: async () => {
      // Every panel shows what changed without waiting for its next refetch.
      await queryClient.invalidateQueries();
    },
  });
}
