"use client";
// An admin action (bust, release, retry) as an idempotent mutation: one Idempotency-Key per intent
// (kept until the server gives a final answer), so a double-click or the link's retry after a lost
// response sends the same key and the server acts once; the next action gets a new key.
import { useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { newIdempotencyKey } from "@/trpc/idempotency-link";

export function useAdminAction<TInput, TResult>(send: (input: TInput, context: { idempotencyKey: string }) => Promise<TResult>) {
  const queryClient = useQueryClient();
  const [key, setKey] = useState(newIdempotencyKey);
  return useMutation({
    mutationFn: (input: TInput) => send(input, { idempotencyKey: key }),
    onSettled: async () => {
      setKey(newIdempotencyKey());
      // Every panel shows what changed without waiting for its next refetch.
      await queryClient.invalidateQueries();
    },
  });
}
