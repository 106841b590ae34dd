"use client";
// Who is signed in: live browser sessions, newest first; end one (audited, with a reason).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatTime, QueryState, REFRESH_MS } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { given } from "./list-filters";
import { CellTable, type Cells } from "../DataTable";

type Session = RouterOutputs["admin"]["sessions"]["list"][number];

export function SessionsPanel() {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const sessions = useQuery({
    ...trpc.admin.sessions.list.queryOptions(given({ email })),
    refetchInterval: REFRESH_MS,
  });
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Live sessions</h2>
      <label>
        Account e-mail contains{" "}
        <input type="search" value={email} onChange={(e) => setEmail(e.target.value)} size={28} />
      </label>
      <QueryState isPending={sessions.isPending} error={sessions.error}>
        {sessions.data?.length === 0 ? (
          <p className="muted">No live sessions.</p>
        ) : (
          <CellTable label="Sessions" cells={SESSION_CELLS} rows={sessions.data ?? []} />
        )}
      </QueryState>
    </section>
  );
}

const SESSION_CELLS: Cells<Session> = {
  Account: (s) => s.email,
  Role: (s) => s.role,
  "Signed in": (s) => formatTime(s.createdAt),
  Expires: (s) => formatTime(s.expiresAt),
  Browser: (s) => <span className="muted">{s.userAgent?.slice(0, 60) ?? "–"}</span>,
  Action: (s) => (
    <ReasonActionForm
      button="End session"
      done="Ended"
      send={(client, reason, context) =>
        client.admin.sessions.end.mutate({ id: s.id, reason }, { context })
      }
    />
  ),
};
