"use client";
// Bust or release one key, with a reason (audited). Busting removes a finished or stuck key;
// releasing frees a stuck lease. The server refuses both while the key's lease is live.
import { useState } from "react";
import type { RemoveKeyInput } from "@/server/api/routers/admin/keys.types";
import { useTRPCClient } from "@/trpc/react";
import { errorText } from "./ui";
import { useAdminAction } from "./ReasonActionForm";
import { AuditReasonField, submitted } from "./fields";

/**
 * The two actions on one key; the last one sent is the one whose outcome shows. The key's tenant
 * goes with its id, so the server's delete names the key's scope.
 */
function useRemoveKey(id: string, tenant: string | undefined) {
  const client = useTRPCClient();
  const bust = useAdminAction((input: RemoveKeyInput, context) =>
    client.admin.keys.bust.mutate(input, { context }),
  );
  const release = useAdminAction((input: RemoveKeyInput, context) =>
    client.admin.keys.release.mutate(input, { context }),
  );
  const send = (action: "bust" | "release", reason: string) => {
    (action === "bust" ? release : bust).reset();
    (action === "bust" ? bust : release).mutate({ id, tenant, reason });
  };
  return { send, busy: bust.isPending || release.isPending, last: bust.isIdle ? release : bust };
}

interface RemoveKeyProps {
  id: string;
  /** The key's tenant (its scope), while the key exists. */
  tenant: string | undefined;
  /** False once the key is gone: the form stays, its feedback on screen, its buttons disabled. */
  exists: boolean;
  /** The key is PROCESSING under a live lease: the server will refuse to remove it. */
  leaseLive: boolean;
}

export function RemoveKeyForm({ id, tenant, exists, leaseLive }: RemoveKeyProps) {
  const [reason, setReason] = useState("");
  const { send, busy, last } = useRemoveKey(id, tenant);
  const disabled = busy || !exists;
  return (
    <section className="card" aria-labelledby="remove-heading" style={{ marginTop: "1rem" }}>
      <h2 id="remove-heading">Bust or release</h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Busting removes a finished key (or a stuck one) so the next request with it runs anew.
        Releasing frees a stuck lease. A key whose lease is live cannot be removed: its request may
        still commit.
        {leaseLive && <strong> This key&apos;s lease is live right now.</strong>}
      </p>
      {/* Submitting busts; release checks the reason the same way. */}
      <form className="row" onSubmit={submitted(() => send("bust", reason))}>
        <AuditReasonField value={reason} onChange={setReason} flex="1" />
        <button type="submit" disabled={disabled}>
          Bust key
        </button>
        <button
          type="button"
          className="secondary"
          disabled={disabled}
          onClick={(e) => e.currentTarget.form?.reportValidity() && send("release", reason)}
        >
          Release lease
        </button>
      </form>
      <RemoveOutcome busy={busy} last={last} />
    </section>
  );
}

function RemoveOutcome({ busy, last }: Pick<ReturnType<typeof useRemoveKey>, "busy" | "last">) {
  return (
    <>
      {busy && (
        <p className="muted" role="status">
          Working…
        </p>
      )}
      {last.isSuccess && (
        <div role="status" className="alert ok">
          {last.data.action === "bust" ? "Key busted" : "Lease released"}: the next request with key{" "}
          <span className="mono">{last.data.key.key}</span> runs anew. Audit entry{" "}
          {last.data.auditId.slice(0, 8)} written.
        </div>
      )}
      {last.isError && (
        <div role="alert" className="alert bad">
          Refused: {errorText(last.error)}
        </div>
      )}
    </>
  );
}
