"use client";
// One key: fingerprint, stored outcome, timestamps, lease, attempts; bust/release with a reason;
// its audit trail (which outlives the key).
import Link from "next/link";
import { useState, type FormEvent } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { errorText, formatTime, LeaseBadge, QueryState, REFRESH_MS, StatusBadge } from "./ui";
import { useAdminAction } from "./useAdminAction";
import { AuditTable } from "./AuditPanel";
import { KeyTimeline } from "./KeyTimeline";
import { AuditReasonField } from "./AuditReasonField";

/** Facts wrap inside a 390 px screen: no default indent, and a long name breaks where it must. */
const DD = { margin: 0, overflowWrap: "anywhere" } as const;

export function KeyDetail({ id }: { id: string }) {
  const trpc = useTRPC();
  const detail = useQuery({
    ...trpc.admin.keys.byId.queryOptions({ id }),
    refetchInterval: REFRESH_MS,
    retry: false,
  });
  const k = detail.data?.key;
  return (
    <>
      <p className="row">
        <Link href="/admin">← All keys</Link>
        {(k?.key ?? goneKeyName(detail.data?.audit)) && (
          <Link
            href={`/admin/audit?key=${encodeURIComponent(k?.key ?? goneKeyName(detail.data?.audit) ?? "")}`}
          >
            This key in the audit log
          </Link>
        )}
      </p>
      <h1>
        Key{" "}
        <span className="mono" style={{ wordBreak: "break-all" }}>
          {k?.key ?? goneKeyName(detail.data?.audit) ?? id}
        </span>
      </h1>
      <QueryState isPending={detail.isPending} error={detail.error}>
        {detail.data && !k && (
          <div className="alert warn" role="status">
            This key no longer exists (busted, released or reaped): its audit trail is below.
          </div>
        )}
        {k && (
          <section className="card" aria-label="Key detail">
            <dl
              className="key-facts"
              style={{
                display: "grid",
                gridTemplateColumns: "max-content minmax(0, 1fr)",
                gap: "0.3rem 1rem",
                margin: 0,
              }}
            >
              <dt>Status</dt>
              <dd style={DD}>
                <StatusBadge status={k.status} />
              </dd>
              <dt>Tenant</dt>
              <dd style={DD}>{k.tenant}</dd>
              <dt>Procedure</dt>
              <dd className="mono" style={DD}>
                {k.procedure}
              </dd>
              <dt>Idempotency key</dt>
              <dd className="mono" style={{ ...DD, wordBreak: "break-all" }}>
                {k.key}
              </dd>
              <dt>Fingerprint</dt>
              <dd className="mono" style={{ ...DD, wordBreak: "break-all" }}>
                {k.fingerprint}
              </dd>
              <dt>Attempts</dt>
              <dd style={DD}>{k.attempts}</dd>
              <dt>Lease</dt>
              <dd style={DD}>
                <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />{" "}
                {k.leaseExpiresAt && (
                  <span className="muted">(lease end {formatTime(k.leaseExpiresAt)})</span>
                )}
              </dd>
              <dt>Lease token</dt>
              <dd className="mono" style={{ ...DD, wordBreak: "break-all" }}>
                {k.leaseToken ?? "–"}
              </dd>
              <dt>Created</dt>
              <dd style={DD}>{formatTime(k.createdAt)}</dd>
              <dt>Updated</dt>
              <dd style={DD}>{formatTime(k.updatedAt)}</dd>
              <dt>Completed</dt>
              <dd style={DD}>{formatTime(k.completedAt)}</dd>
              <dt>Expires</dt>
              <dd style={DD}>{formatTime(k.expiresAt)}</dd>
              <dt>Stored status</dt>
              <dd style={DD}>{k.responseStatus ?? "–"}</dd>
              <dt>Stored content type</dt>
              <dd className="mono" style={DD}>
                {k.responseContentType ?? "–"}
              </dd>
            </dl>
            <h2 style={{ fontSize: "1rem" }}>Stored body</h2>
            <pre
              className="mono"
              aria-label="Stored body"
              style={{ whiteSpace: "pre-wrap", maxHeight: "20rem", overflow: "auto" }}
            >
              {k.responseBody ?? "– (nothing stored yet)"}
            </pre>
          </section>
        )}
        {detail.data && <KeyTimeline events={detail.data.timeline} currentId={id} />}
        {/* Stays mounted after a bust removed the key, so its feedback stays on screen. */}
        {detail.data && (
          <RemoveKeyForm id={id} exists={!!k} status={k?.status} leaseState={k?.leaseState} />
        )}
        {detail.data && (
          <section aria-labelledby="key-audit" style={{ marginTop: "1.5rem" }}>
            <h2 id="key-audit">Audit trail</h2>
            {detail.data.audit.length === 0 ? (
              <p className="muted">No manual actions on this key.</p>
            ) : (
              <AuditTable entries={detail.data.audit} label="Audit trail of this key" />
            )}
          </section>
        )}
      </QueryState>
    </>
  );
}

/** A removed key's name, from what its audit entry recorded. */
function goneKeyName(audit: { details?: unknown }[] | undefined): string | undefined {
  const key = (audit?.[0]?.details as { key?: unknown } | null | undefined)?.key;
  return typeof key === "string" ? key : undefined;
}

function RemoveKeyForm({
  id,
  exists,
  status,
  leaseState,
}: {
  id: string;
  exists: boolean;
  status?: string;
  leaseState?: "live" | "expired" | "none";
}) {
  const client = useTRPCClient();
  const [reason, setReason] = useState("");
  const bust = useAdminAction((input: { id: string; reason: string }, context) =>
    client.admin.keys.bust.mutate(input, { context }),
  );
  const release = useAdminAction((input: { id: string; reason: string }, context) =>
    client.admin.keys.release.mutate(input, { context }),
  );
  const busy = bust.isPending || release.isPending;
  const disabled = busy || !exists;
  const last = bust.isIdle ? release : bust;

  const submit = (action: "bust" | "release") => (e?: FormEvent) => {
    e?.preventDefault();
    const run = action === "bust" ? bust : release;
    (action === "bust" ? release : bust).reset();
    run.mutate({ id, reason });
  };

  return (
    <section className="card" aria-labelledby="remove-heading" style={{ marginTop: "1rem" }}>
      <h2 id="remove-heading" style={{ fontSize: "1.05rem", marginTop: 0 }}>
        Bust or release
      </h2>
      <p className="muted" style={{ marginTop: 0 }}>
        Busting removes a finished key (or a stuck one) so the next request with it runs anew.
        Releasing frees a stuck lease. A key whose lease is live cannot be removed: its request may
        still commit.
        {status === "PROCESSING" && leaseState === "live" && (
          <strong> This key&apos;s lease is live right now.</strong>
        )}
      </p>
      <form onSubmit={submit("bust")} className="row">
        <AuditReasonField value={reason} onChange={setReason} flex="1" />
        <button type="submit" disabled={disabled}>
          Bust key
        </button>
        <button
          type="button"
          className="secondary"
          disabled={disabled}
          onClick={(e) => e.currentTarget.form?.reportValidity() && submit("release")()}
        >
          Release lease
        </button>
      </form>
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
    </section>
  );
}
