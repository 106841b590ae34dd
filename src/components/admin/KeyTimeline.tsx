// A key's timeline (derived on the server from the key row and the audit log): oldest first, each
// row the value had told apart, busts and releases with who and why.
import type { TimelineEvent } from "@/server/admin/timeline";
import { formatTime } from "./ui";

const TONE: Partial<Record<TimelineEvent["kind"], string>> = {
  completed: "ok",
  failed: "bad",
  busted: "warn",
  released: "warn",
};

export function KeyTimeline({ events, currentId }: { events: TimelineEvent[]; currentId: string }) {
  const rows = [...new Set(events.map((e) => e.rowId))];
  return (
    <section aria-labelledby="timeline-heading" style={{ marginTop: "1.5rem" }}>
      <h2 id="timeline-heading">Timeline</h2>
      <ol aria-label="Timeline" style={{ paddingLeft: "1.2rem" }}>
        {events.map((e, i) => (
          <li key={i} style={{ marginBottom: "0.35rem" }}>
            <span className="muted">{e.at ? formatTime(e.at) : "time not recorded"}</span>{" "}
            <span className={`badge ${TONE[e.kind] ?? ""}`}>{e.kind.replace("_", " ")}</span>{" "}
            {e.text}
            {e.reason && <>: “{e.reason}”</>}
            {rows.length > 1 && (
              <span className="muted">
                {" "}
                (row {rows.indexOf(e.rowId) + 1}
                {e.rowId === currentId ? ", this one" : ""})
              </span>
            )}
          </li>
        ))}
      </ol>
      <p className="muted" style={{ fontSize: "0.85rem" }}>
        From the key row and the audit log. Not recorded anywhere, so not shown: when each attempt
        before the last one started, the replays and 409/422 answers this key got, the engine&apos;s
        own release after a server error, and the sweeper&apos;s or reaper&apos;s deletes.
      </p>
    </section>
  );
}
