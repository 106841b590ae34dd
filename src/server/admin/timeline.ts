// A key's history, derived from what is stored: the key row (reserved, attempts, lease, outcome)
// and the audit log (every bust and release, with who and why, and what the removed row held).
// One key value can live several times: a bust removes the row and the next request with the same
// value makes a new one, so the audit entries of earlier rows carry their own reserved/outcome.
//
// What is NOT stored, so not shown: when each attempt before the last one started (only their
// count and the last takeover's time while PROCESSING), replays and 409/422 answers per key (the
// counters are per tenant and procedure), the engine's own release after a 5xx (a fenced delete,
// unrecorded), and the sweeper's and reaper's deletes (the row just ends).
import type { KeyDetailRow } from "./keys-query";
import { AuditAction } from "@/shared/audit-actions";
import { leaseText } from "@/shared/lease-text";

type TimelineKind =
  "reserved" | "taken_over" | "lease" | "completed" | "failed" | "busted" | "released" | "removed";

export interface TimelineEvent {
  at: string | null;
  kind: TimelineKind;
  /** The key row this happened to (a value busted and used again has several). */
  rowId: string;
  text: string;
  actor?: string;
  reason?: string;
}

export interface AuditForTimeline {
  id: string;
  actor: string;
  action: string;
  targetId: string;
  reason: string;
  details: unknown;
  createdAt: Date;
}

interface RemovedRow {
  createdAt?: string;
  completedAt?: string | null;
  attempts?: number;
  status?: string;
  responseStatus?: number | null;
}

/** A time from an audit entry's details as ISO in UTC (the database writes "+00:00", JS "Z"). */
const isoOf = (value: string | null | undefined): string | null =>
  value ? new Date(value).toISOString() : null;

function outcome(
  rowId: string,
  status: string | undefined,
  at: string | null | undefined,
  responseStatus: number | null | undefined,
): TimelineEvent[] {
  const code = responseStatus ?? "?";
  if (status === "COMPLETED")
    return [
      { at: at ?? null, kind: "completed", rowId, text: `completed (${code}), answer stored` },
    ];
  if (status === "FAILED")
    return [
      { at: at ?? null, kind: "failed", rowId, text: `failed with ${code} (stored, replayed)` },
    ];
  return [];
}

function attempts(rowId: string, n: number | undefined, lastAt: string | null): TimelineEvent[] {
  if (!n || n <= 1) return [];
  const times = n - 1 === 1 ? "once" : `${n - 1} times`;
  return [
    {
      at: lastAt,
      kind: "taken_over",
      rowId,
      text: `taken over ${times} after an expired lease (${n} attempts${lastAt ? "; time of the last one" : ""})`,
    },
  ];
}

/** The current row's events: reserved, takeovers, the lease it holds now, its outcome. */
function rowEvents(r: KeyDetailRow): TimelineEvent[] {
  const at = r.createdAt.toISOString();
  const events: TimelineEvent[] = [
    { at, kind: "reserved", rowId: r.id, text: `reserved by ${r.procedure}` },
  ];
  const processing = r.status === "PROCESSING";
  // While PROCESSING, updatedAt is the last takeover's time; after the outcome it is the outcome's.
  events.push(
    ...attempts(r.id, r.attempts, processing && r.attempts > 1 ? r.updatedAt.toISOString() : null),
  );
  if (processing && r.leaseExpiresAt && r.leaseRemainingMs !== null) {
    // The event's kind ("lease") is shown beside its text: the text does not say it again.
    const text = leaseText(r.leaseRemainingMs > 0 ? "live" : "expired", r.leaseRemainingMs);
    events.push({ at: r.leaseExpiresAt.toISOString(), kind: "lease", rowId: r.id, text });
  }
  events.push(...outcome(r.id, r.status, r.completedAt?.toISOString(), r.responseStatus));
  return events;
}

/** A removed row's events, from what its bust/release entry recorded, then the removal itself. */
function auditEvents(a: AuditForTimeline): TimelineEvent[] {
  const before = (a.details ?? {}) as RemovedRow;
  const kind: TimelineKind =
    a.action === AuditAction.KEY_BUST
      ? "busted"
      : a.action === AuditAction.KEY_RELEASE
        ? "released"
        : "removed";
  return [
    ...(before.createdAt
      ? [
          {
            at: isoOf(before.createdAt),
            kind: "reserved" as const,
            rowId: a.targetId,
            text: "reserved",
          },
        ]
      : []),
    ...attempts(a.targetId, before.attempts, null),
    ...outcome(a.targetId, before.status, isoOf(before.completedAt), before.responseStatus),
    {
      at: a.createdAt.toISOString(),
      kind,
      rowId: a.targetId,
      text: `${kind} by ${a.actor}`,
      actor: a.actor,
      reason: a.reason,
    },
  ];
}

/** Oldest first; events without a time (a takeover count) sit after the event before them. */
export function buildTimeline(
  row: KeyDetailRow | null,
  audit: AuditForTimeline[],
): TimelineEvent[] {
  const ordered = [...audit].sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime());
  const events = [...ordered.flatMap(auditEvents), ...(row ? rowEvents(row) : [])];
  let last = "";
  const keyed = events.map((e, i) => ({ e, i, t: (last = e.at ?? last) }));
  keyed.sort((x, y) => (x.t < y.t ? -1 : x.t > y.t ? 1 : x.i - y.i));
  return keyed.map((k) => k.e);
}
