"use client";
// An admin action (bust, release, retry) as an idempotent mutation, and the form of one row action
// that needs a reason (retry an outbox message, end a session): the reason, the button, and what
// came of it.
import type { IdempotencyContext } from "@once/idempotency/client";
import { useIdempotency } from "@once/idempotency/client/react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useTRPCClient } from "@/trpc/react";
import { errorText } from "./ui";
import { AuditReasonField, submitted } from "./fields";

/**
 * One Idempotency-Key per intent (the package's useIdempotency: kept until the server gives a
 * final answer), so a double-click or the link's retry after a lost response sends the same key
 * and the server acts once; the next action gets a new key.
 */
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

export function ReasonActionForm({
  button,
  done,
  send,
}: {
  button: string;
  /** Shown once the action succeeded. */
  done: string;
  send: (
    client: ReturnType<typeof useTRPCClient>,
    reason: string,
    context: IdempotencyContext,
  ) => Promise<unknown>;
}) {
  const client = useTRPCClient();
  const [reason, setReason] = useState("");
  const action = useAdminAction((input: { reason: string }, context) =>
    send(client, input.reason, context),
  );
  return (
    <form className="row" onSubmit={submitted(() => action.mutate({ reason }))}>
      <AuditReasonField value={reason} onChange={setReason} />
      <button type="submit" disabled={action.isPending}>
        {button}
      </button>
      {action.isSuccess && (
        <span role="status" className="badge ok">
          {done}
        </span>
      )}
      {action.isError && (
        <span role="alert" className="badge bad">
          Refused: {errorText(action.error)}
        </span>
      )}
    </form>
  );
}
