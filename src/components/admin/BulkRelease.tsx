"use client";
// Release every stuck lease the keys filter selects (an instance died holding hundreds), with one
// reason. The server frees one bounded batch per call, each key audited; this loops while some
// remain, each batch its own idempotent request (a lost answer is retried with the same key).
import { useState } from "react";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useTRPC, useTRPCClient } from "@/trpc/react";
import { newIdempotencyKey } from "@once/idempotency/client";
import { errorText, REFRESH_MS } from "./ui";
import { AuditReasonField, submitted } from "./fields";
import { given } from "./list-filters";

type Progress =
  | { state: "idle" }
  | { state: "running"; released: number }
  | { state: "done"; released: number; left: number }
  | { state: "failed"; released: number; error: unknown };

type Filter = { tenant?: string; procedure?: string };

/** Batches per click: 2 000 stuck leases are 4 batches of 500; this bounds a runaway loop. */
const MAX_BATCHES = 100;

/** Releases batch after batch until none is left (or none could be), reporting as it goes. */
function useBulkRelease(filter: Filter) {
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const [progress, setProgress] = useState<Progress>({ state: "idle" });
  const run = async (reason: string) => {
    let released = 0;
    setProgress({ state: "running", released });
    try {
      for (let batch = 0; batch < MAX_BATCHES; batch++) {
        const r = await client.admin.keys.releaseStuck.mutate(
          { ...filter, reason },
          { context: { idempotencyKey: newIdempotencyKey() } },
        );
        released += r.released;
        setProgress({ state: "running", released });
        // Nothing freed: what is left is being taken over right now (skipped, not waited for).
        if (r.remaining === 0 || r.released === 0) {
          setProgress({ state: "done", released, left: r.remaining });
          break;
        }
      }
    } catch (error) {
      setProgress({ state: "failed", released, error });
    }
    await queryClient.invalidateQueries();
  };
  return { progress, run };
}

export function BulkRelease({ tenant, procedure }: Filter) {
  const trpc = useTRPC();
  const filter = given({ tenant, procedure });
  const count = useQuery({
    ...trpc.admin.keys.stuckCount.queryOptions(filter),
    refetchInterval: REFRESH_MS,
  });
  const [reason, setReason] = useState("");
  const { progress, run } = useBulkRelease(filter);
  const n = count.data?.stuck ?? 0;
  return (
    <section className="card" aria-labelledby="bulk-heading" style={{ margin: "0.75rem 0" }}>
      <h3 id="bulk-heading">Release stuck leases in bulk</h3>
      <StuckCount n={n} filter={filter} />
      <form className="row" onSubmit={submitted(() => void run(reason))}>
        <AuditReasonField
          label="Reason for the bulk release"
          value={reason}
          onChange={setReason}
          flex="1 1 16rem"
        />
        <button type="submit" disabled={n === 0 || progress.state === "running"}>
          Release {n} stuck {n === 1 ? "lease" : "leases"}
        </button>
      </form>
      <BulkProgress progress={progress} />
    </section>
  );
}

function StuckCount({ n, filter: { tenant, procedure } }: { n: number; filter: Filter }) {
  const where = [tenant && `tenant ${tenant}`, procedure && `procedures starting with ${procedure}`]
    .filter(Boolean)
    .join(", ");
  return (
    <p className="muted" style={{ marginTop: 0 }} role="status">
      {n} stuck {n === 1 ? "lease matches" : "leases match"}{" "}
      {where ? `this filter (${where})` : "(all tenants, all procedures)"}. Each is re-checked as it
      is released (a key a retry took over meanwhile is left alone) and written to the audit log
      with your reason.
    </p>
  );
}

function BulkProgress({ progress }: { progress: Progress }) {
  switch (progress.state) {
    case "idle":
      return null;
    case "running":
      return <p role="status">Releasing… {progress.released} so far</p>;
    case "done":
      return (
        <div role="status" className="alert ok">
          Released {progress.released} stuck {progress.released === 1 ? "lease" : "leases"}, each
          audited.
          {progress.left > 0 && ` ${progress.left} left: they are being taken over right now.`}
        </div>
      );
    case "failed":
      return (
        <div role="alert" className="alert bad">
          Stopped after {progress.released} released: {errorText(progress.error)}
        </div>
      );
  }
}
