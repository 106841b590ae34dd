"use client";
// Who is signed in: live browser sessions, newest first; end one (audited, with a reason).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { formatTime, QueryState, REFRESH_MS } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { ColumnHeads } from "../ColumnHeads";

export function SessionsPanel() {
  const trpc = useTRPC();
  const [email, setEmail] = useState("");
  const sessions = useQuery({
    ...trpc.admin.sessions.list.queryOptions(email.trim() ? { email: email.trim() } : {}),
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
          <table aria-label="Sessions">
            <ColumnHeads
              labels={["Account", "Role", "Signed in", "Expires", "Browser", "Action"]}
            />
            <tbody>
              {sessions.data?.map((s) => (
                <tr key={s.id}>
                  <td>{s.email}</td>
                  <td>{s.role}</td>
                  <td>{formatTime(s.createdAt)}</td>
                  <td>{formatTime(s.expiresAt)}</td>
                  <td className="muted">{s.userAgent?.slice(0, 60) ?? "–"}</td>
                  <td>
                    <EndForm id={s.id} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </QueryState>
    </section>
  );
}

function EndForm({ id }: { id: string }) {
  const client = useTRPCClient();
  return (
    <ReasonActionForm
      button="End session"
      done="Ended"
      send={(reason, context) => client.admin.sessions.end.mutate({ id, reason }, { context })}
    />
  );
}
