// Whether the key store's commits are synchronously replicated, as the operator is told: read from
// a real server (the tests' own, which has no standby), and decided for each configuration a
// failover manager can leave the primary in.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { handleMetricsRequest } from "./metrics";
import {
  describeReplication,
  readReplicationStatus,
  ReplicationMode,
  type ReplicationFacts,
} from "./replication";
import { TOKENS } from "@/test/http";
import { testApp } from "../test/app";

const t = useTestDatabase();

const facts = (over: Partial<ReplicationFacts>): ReplicationFacts => ({
  synchronousCommit: "on",
  standbyNames: "",
  standbys: [],
  ...over,
});

describe("the store's replication, as the operator sees it", () => {
  it("reads a server without standbys as standalone, with a warning, and /api/metrics says 0", async () => {
    const status = await readReplicationStatus(t.db);
    expect(status.mode).toBe(ReplicationMode.STANDALONE);
    expect(status.warning).toMatch(/No standby/);
    // A development database's normal state: said, but not raised as an alarm (the dashboard's card
    // stays neutral).
    expect(status.alarm).toBe(false);
    const res = await handleMetricsRequest(
      testApp(t.db),
      new Request("http://localhost/api/metrics", {
        headers: { authorization: `Bearer ${TOKENS.admin}` },
      }),
    );
    const text = await res.text();
    expect(text).toMatch(/^once_store_commits_synchronous 0$/m);
    expect(text).toMatch(/^once_store_synchronous_standbys 0$/m);
  });

  it("synchronous: a standby is named and one streams as sync (or quorum); no warning", () => {
    const named = { standbyNames: "pg2", standbys: [{ name: "pg2", syncState: "sync" }] };
    expect(describeReplication(facts(named))).toMatchObject({
      mode: "synchronous",
      warning: null,
      alarm: false,
    });
    expect(
      describeReplication(
        facts({ standbyNames: "ANY 1 (a, b)", standbys: [{ name: "a", syncState: "quorum" }] }),
      ).mode,
    ).toBe("synchronous");
  });

  it("asynchronous: standbys stream, none is named (or synchronous_commit does not wait)", () => {
    const async = describeReplication(facts({ standbys: [{ name: "pg2", syncState: "async" }] }));
    expect(async.mode).toBe("asynchronous");
    expect(async.alarm).toBe(true);
    expect(async.warning).toMatch(
      /synchronous_standby_names is empty.*lose orders that were already answered 200/,
    );
    const local = describeReplication(
      facts({
        synchronousCommit: "local",
        standbyNames: "pg2",
        standbys: [{ name: "pg2", syncState: "sync" }],
      }),
    );
    expect(local.mode).toBe("asynchronous");
    expect(local.warning).toMatch(/synchronous_commit is local/);
  });

  it("standby missing: one is named but none streams as sync", () => {
    const missing = describeReplication(
      facts({ standbyNames: "pg2", standbys: [{ name: "pg3", syncState: "potential" }] }),
    );
    expect(missing.mode).toBe("standby_missing");
    expect(missing.alarm).toBe(true);
    expect(missing.warning).toMatch(/no synchronous standby is connected/);
  });
});
