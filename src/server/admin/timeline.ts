// A key's history, derived from what is stored: the key row (reserved, attempts, lease, outcome)
// and the audit log (every bust and release, who and why, what the removed row held). One value
// can live several times (bust, then used again): earlier rows' entries carry their own outcome.
// Not stored, so not shown: each earlier attempt's start, replays and 409/422 per key, the
// engine's release after a 5xx, and the sweeper's and reaper's deletes.
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

const event = (at: string | null | undefined, kind: TimelineKind, rowId: string, text: string) =>
  ({ at: at ?? null, kind, rowId, text }) satisfies TimelineEvent;

type Outcome = Pick<RemovedRow, "status" | "responseStatus">;
function outcome(rowId: string, row: Outcome, at: string | null | undefined): TimelineEvent[] {
  const code = row.responseStatus ?? "?";
  if (row.status === "COMPLETED")
    return [event(at, "completed", rowId, `completed (${code}), answer stored`)];
  if (row.status === "FAILED")
    return [event(at, "failed", rowId, `failed with ${code} (stored, replayed)`)];
  return [];
}

function attempts(rowId: string, n: number | undefined, lastAt: string | null): TimelineEvent[] {
  if (!n || n <= 1) return [];
  const times = n - 1 === 1 ? "once" : `${n - 1} times`;
  const last = lastAt ? "; time of the last one" : "";
  const text = `taken over ${times} after an expired lease (${n} attempts${last})`;
  return [event(lastAt, "taken_over", rowId, text)];
}

/** The current row's events: reserved, takeovers, the lease it holds now, its outcome. */
function rowEvents(r: KeyDetailRow): TimelineEvent[] {
  const at = r.createdAt.toISOString();
  const events: TimelineEvent[] = [event(at, "reserved", r.id, `reserved by ${r.procedure}`)];
  const processing = r.status === "PROCESSING";
  // While PROCESSING, updatedAt is the last takeover's time; after the outcome it is the outcome's.
  events.push(
    ...attempts(r.id, r.attempts, processing && r.attempts > 1 ? r.updatedAt.toISOString() : null),
  );
  if (processing && r.leaseExpiresAt && r.leaseRemainingMs !== null) {
    // The event's kind ("lease") is shown beside its text: the text does not say it again.
    const text = leaseText(r.leaseRemainingMs > 0 ? "live" : "expired", r.leaseRemainingMs);
    events.push(event(r.leaseExpiresAt.toISOString(), "lease", r.id, text));
  }
  events.push(...outcome(r.id, r, r.completedAt?.toISOString()));
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
  const id = a.targetId;
  const removal = { actor: a.actor, reason: a.reason };
  return [
    ...(before.createdAt ? [event(isoOf(before.createdAt), "reserved", id, "reserved")] : []),
    ...attempts(id, before.attempts, null),
    ...outcome(id, before, isoOf(before.completedAt)),
    { ...event(a.createdAt.toISOString(), kind, id, `${kind} by ${a.actor}`), ...removal },
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
