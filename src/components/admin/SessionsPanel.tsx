"use client";
// Who is signed in: live browser sessions, newest first; end one (audited, with a reason).
import { useState } from "react";
import { useQuery } from "@tanstack/react-query";
import { useTRPC, type RouterOutputs } from "@/trpc/react";
import { formatTime, QueryState, REFRESH_MS } from "./ui";
import { ReasonActionForm } from "./ReasonActionForm";
import { given } from "./list-filters";
import { DataTable } from "../DataTable";

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
          <DataTable
            label="Sessions"
            columns={["Account", "Role", "Signed in", "Expires", "Browser", "Action"]}
          >
            {sessions.data?.map((s) => (
              <SessionRow key={s.id} s={s} />
            ))}
          </DataTable>
        )}
      </QueryState>
    </section>
  );
}

function SessionRow({ s }: { s: Session }) {
  return (
    <tr>
      <td>{s.email}</td>
      <td>{s.role}</td>
      <td>{formatTime(s.createdAt)}</td>
      <td>{formatTime(s.expiresAt)}</td>
      <td className="muted">{s.userAgent?.slice(0, 60) ?? "–"}</td>
      <td>
        <ReasonActionForm
          button="End session"
          done="Ended"
          send={(client, reason, context) =>
            client.admin.sessions.end.mutate({ id: s.id, reason }, { context })
          }
        />
      </td>
    </tr>
  );
}
