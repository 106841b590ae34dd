// The errors page every error answer links to (Link: </docs/errors#reason>; rel="describedby"):
// one entry per reason, written from the shared table, so the page and the API cannot drift.
import type { Metadata } from "next";
import { REASON_INFO, type Reason } from "@/shared/reasons";

export const metadata: Metadata = { title: "Errors — once" };

const entries = Object.entries(REASON_INFO) as [Reason, (typeof REASON_INFO)[Reason]][];

export default function ErrorsPage() {
  return (
    <article>
      <h1>Errors</h1>
      <p className="muted">
        Every error answer from <code>/api/trpc</code> carries <code>error.data.reason</code>, one
        of the words below, and a <code>Link</code> header to its entry here. Branch on the reason,
        not on the message.
      </p>
      <dl>
        {entries
          .sort(([a, x], [b, y]) => x.status - y.status || a.localeCompare(b))
          .map(([reason, info]) => (
            <div key={reason} id={reason} style={{ marginBottom: "1rem" }}>
              <dt>
                <code>{reason}</code> <span className="muted">· HTTP {info.status}</span>
              </dt>
              <dd>
                <p>{info.meaning}</p>
                <p>
                  <strong>What to do:</strong> {info.remedy}
                </p>
              </dd>
            </div>
          ))}
      </dl>
    </article>
  );
}
