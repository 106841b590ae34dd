"use client";
// One row action that needs a reason (retry an outbox message, end a session): the reason, the
// button, and what came of it. Sent as an idempotent admin mutation (useAdminAction).
import type { IdempotencyContext } from "@once/idempotency/client";
import { useState } from "react";
import { useTRPCClient } from "@/trpc/react";
import { errorText } from "./ui";
import { useAdminAction } from "./useAdminAction";
import { AuditReasonField, submitted } from "./fields";

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
