"use client";
// One key: fingerprint, stored outcome, timestamps, lease, attempts; bust/release with a reason;
// its audit trail (which outlives the key).
import Link from "next/link";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import type { KeyDetail as Key } from "@/server/api/routers/admin/view";
import { formatTime, LeaseBadge, QueryState, REFRESH_MS, StatusBadge } from "./ui";
import { AuditTable, type Entry } from "./AuditPanel";
import { KeyTimeline } from "./KeyTimeline";
import { RemoveKeyForm } from "./RemoveKeyForm";
import { Facts } from "../Facts";

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
      <KeyHeading name={k?.key ?? goneKeyName(detail.data?.audit)} id={id} />
      <QueryState isPending={detail.isPending} error={detail.error}>
        {k ? (
          <KeyFacts k={k} />
        ) : (
          <div className="alert warn" role="status">
            This key no longer exists (busted, released or reaped): its audit trail is below.
          </div>
        )}
        <KeyTimeline events={detail.data?.timeline ?? []} currentId={id} />
        {/* Stays mounted after a bust removed the key, so its feedback stays on screen. */}
        <RemoveKeyForm
          id={id}
          tenant={k?.tenant}
          exists={!!k}
          leaseLive={k?.status === "PROCESSING" && k.leaseState === "live"}
        />
        <KeyAuditTrail audit={detail.data?.audit ?? []} />
      </QueryState>
    </>
  );
}

/** A removed key's name, from what its audit entry recorded. */
function goneKeyName(audit: { details?: unknown }[] | undefined): string | undefined {
  const key = (audit?.[0]?.details as { key?: unknown } | null | undefined)?.key;
  return typeof key === "string" ? key : undefined;
}

/**
 * The key's value (the row id until it is known, `id`), and once it is, a link to its entries in
 * the audit log.
 */
export function KeyHeading({ name, id }: { name: string | undefined; id?: string }) {
  return (
    <>
      <p className="row">
        <Link href="/admin">← All keys</Link>
        {name && id && (
          <Link href={`/admin/audit?key=${encodeURIComponent(name)}`}>
            This key in the audit log
          </Link>
        )}
      </p>
      <h1>
        Key <span className="mono break-anywhere">{name ?? id}</span>
      </h1>
    </>
  );
}

/** The busts and releases of this key (and of the rows its value had before), newest first. */
function KeyAuditTrail({ audit }: { audit: Entry[] }) {
  return (
    <section aria-labelledby="key-audit" style={{ marginTop: "1.5rem" }}>
      <h2 id="key-audit">Audit trail</h2>
      {audit.length === 0 ? (
        <p className="muted">No manual actions on this key.</p>
      ) : (
        <AuditTable entries={audit} label="Audit trail of this key" />
      )}
    </section>
  );
}

function KeyFacts({ k }: { k: Key }) {
  const lease = (
    <>
      <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />{" "}
      {k.leaseExpiresAt && (
        <span className="muted">(lease end {formatTime(k.leaseExpiresAt)})</span>
      )}
    </>
  );
  return (
    <section className="card" aria-label="Key detail">
      <Facts
        className="flush"
        of={[
          ["Status", <StatusBadge status={k.status} />],
          ["Tenant", k.tenant],
          ["Procedure", <code>{k.procedure}</code>],
          ["Idempotency key", <code>{k.key}</code>],
          ["Fingerprint", <code>{k.fingerprint}</code>],
          ["Attempts", k.attempts],
          ["Lease", lease],
          ["Lease token", <code>{k.leaseToken ?? "–"}</code>],
          ["Created", formatTime(k.createdAt)],
          ["Updated", formatTime(k.updatedAt)],
          ["Completed", formatTime(k.completedAt)],
          ["Expires", formatTime(k.expiresAt)],
          ["Stored status", k.responseStatus ?? "–"],
          ["Stored content type", <code>{k.responseContentType ?? "–"}</code>],
        ]}
      />
      <StoredBody body={k.responseBody} />
    </section>
  );
}

/** The stored answer's exact text, as the replay sends it. */
function StoredBody({ body }: { body: string | null }) {
  return (
    <>
      <h2 style={{ fontSize: "1rem" }}>Stored body</h2>
      <pre
        className="mono"
        aria-label="Stored body"
        style={{ whiteSpace: "pre-wrap", maxHeight: "20rem", overflow: "auto" }}
      >
        {body ?? "– (nothing stored yet)"}
      </pre>
    </>
  );
}
