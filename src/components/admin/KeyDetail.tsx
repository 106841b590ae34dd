"use client";
// One key: fingerprint, stored outcome, timestamps, lease, attempts; bust/release with a reason;
// its audit trail (which outlives the key).
import Link from "next/link";
import type { ReactNode } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC } from "@/trpc/react";
import type { KeyDetail as Key } from "@/server/api/routers/admin/view";
import { formatTime, LeaseBadge, QueryState, REFRESH_MS, StatusBadge } from "./ui";
import { AuditTable, type Entry } from "./AuditPanel";
import { KeyTimeline } from "./KeyTimeline";
import { RemoveKeyForm } from "./RemoveKeyForm";

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
      <KeyHeading id={id} name={k?.key ?? goneKeyName(detail.data?.audit)} />
      <QueryState isPending={detail.isPending} error={detail.error}>
        {detail.data && !k && (
          <div className="alert warn" role="status">
            This key no longer exists (busted, released or reaped): its audit trail is below.
          </div>
        )}
        {k && <KeyFacts k={k} />}
        {detail.data && <KeyTimeline events={detail.data.timeline} currentId={id} />}
        {/* Stays mounted after a bust removed the key, so its feedback stays on screen. */}
        {detail.data && (
          <RemoveKeyForm
            id={id}
            tenant={k?.tenant}
            exists={!!k}
            leaseLive={k?.status === "PROCESSING" && k.leaseState === "live"}
          />
        )}
        {detail.data && <KeyAuditTrail audit={detail.data.audit} />}
      </QueryState>
    </>
  );
}

/** A removed key's name, from what its audit entry recorded. */
function goneKeyName(audit: { details?: unknown }[] | undefined): string | undefined {
  const key = (audit?.[0]?.details as { key?: unknown } | null | undefined)?.key;
  return typeof key === "string" ? key : undefined;
}

/** The key's value (the row id until it is known), and a link to its entries in the audit log. */
function KeyHeading({ id, name }: { id: string; name: string | undefined }) {
  return (
    <>
      <p className="row">
        <Link href="/admin">← All keys</Link>
        {name && (
          <Link href={`/admin/audit?key=${encodeURIComponent(name)}`}>
            This key in the audit log
          </Link>
        )}
      </p>
      <h1>
        Key{" "}
        <span className="mono" style={{ wordBreak: "break-all" }}>
          {name ?? id}
        </span>
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

/** One fact: `code` is set in monospace; a `token` (a key, a hash) also breaks at any character. */
function Fact({
  term,
  text,
  children,
}: {
  term: string;
  text?: "code" | "token";
  children: ReactNode;
}) {
  return (
    <>
      <dt>{term}</dt>
      <dd
        className={text ? "mono" : undefined}
        style={text === "token" ? { wordBreak: "break-all" } : undefined}
      >
        {children}
      </dd>
    </>
  );
}

function KeyFacts({ k }: { k: Key }) {
  return (
    <section className="card" aria-label="Key detail">
      <dl className="facts" style={{ margin: 0 }}>
        <Fact term="Status">
          <StatusBadge status={k.status} />
        </Fact>
        <Fact term="Tenant">{k.tenant}</Fact>
        <Fact term="Procedure" text="code">
          {k.procedure}
        </Fact>
        <Fact term="Idempotency key" text="token">
          {k.key}
        </Fact>
        <Fact term="Fingerprint" text="token">
          {k.fingerprint}
        </Fact>
        <Fact term="Attempts">{k.attempts}</Fact>
        <Fact term="Lease">
          <LeaseBadge state={k.leaseState} remainingMs={k.leaseRemainingMs} />{" "}
          {k.leaseExpiresAt && (
            <span className="muted">(lease end {formatTime(k.leaseExpiresAt)})</span>
          )}
        </Fact>
        <Fact term="Lease token" text="token">
          {k.leaseToken ?? "–"}
        </Fact>
        <Fact term="Created">{formatTime(k.createdAt)}</Fact>
        <Fact term="Updated">{formatTime(k.updatedAt)}</Fact>
        <Fact term="Completed">{formatTime(k.completedAt)}</Fact>
        <Fact term="Expires">{formatTime(k.expiresAt)}</Fact>
        <Fact term="Stored status">{k.responseStatus ?? "–"}</Fact>
        <Fact term="Stored content type" text="code">
          {k.responseContentType ?? "–"}
        </Fact>
      </dl>
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
