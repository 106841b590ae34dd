// A commit that the synchronous standby never confirmed. PostgreSQL does not fail such a COMMIT:
// when the wait for the standby is cancelled it returns success with a WARNING ("canceling wait for
// synchronous replication … committed locally, but might not have been replicated"). A failover
// may then promote a standby that never had it. Produced here for real: a server of this file's own
// waits for a standby that does not exist (synchronous_standby_names = 'nobody'), and the test
// cancels (or terminates) the backend waiting in COMMIT, as an operator or a timeout would.
import pg from "pg";
import { depsOf } from "../src/engine";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  configure,
  effectsFor,
  ENTRY_POINTS,
  keyRow,
  reasonOf,
  type Answer,
  type Engine,
  type EntryPoint,
} from "./support/harness";
import { useOwnServer } from "./support/own-server";

const own = useOwnServer("once-syncrep-", 4);
let admin: pg.Client;
let engine: Engine;

beforeAll(async () => {
  // With a listener, finished answers are kept in memory: the test checks what is (not) kept.
  engine = configure(
    own.db,
    {},
    { listen: () => new pg.Client({ connectionString: own.server.url("postgres") }) },
  );
  await engine.ready;
  admin = new pg.Client({ connectionString: own.server.url("postgres") });
  await admin.connect();
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await engine?.close();
});

/**
 * Every new statement on the server sees `names` (a reload reaches each backend at its next
 * command).
 */
async function waitForStandbyNames(names: string): Promise<void> {
  await admin.query(
    names
      ? `ALTER SYSTEM SET synchronous_standby_names = '${names}'`
      : "ALTER SYSTEM RESET synchronous_standby_names",
  );
  await admin.query("SELECT pg_reload_conf()");
  await vi.waitFor(
    async () =>
      expect(
        (await admin.query("SHOW synchronous_standby_names")).rows[0].synchronous_standby_names,
      ).toBe(names),
    {
      timeout: 60_000,
    },
  );
}

/** The backend waiting in COMMIT for the standby, once there is one. */
async function waitingCommit(): Promise<number> {
  return vi.waitFor(
    async () => {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'`,
      );
      expect(rows).toHaveLength(1);
      return rows[0]!.pid;
    },
    { timeout: 60_000, interval: 20 },
  );
}

const cached = () => depsOf(engine).replayCache!.size;

/**
 * `entry`'s call for `key` while no standby can confirm, with the backend waiting in its COMMIT
 * cancelled or terminated.
 */
async function interruptedCommit(
  entry: EntryPoint,
  key: string,
  interrupt: "pg_cancel_backend" | "pg_terminate_backend",
): Promise<Answer> {
  await waitForStandbyNames("nobody");
  const first = entry.call(own.db, { key, input: { value: key } });
  await admin.query(`SELECT ${interrupt}($1)`, [await waitingCommit()]);
  return first;
}

/**
 * With the standby requirement gone, the retry with the same key: the first execution's answer,
 * replayed.
 */
async function expectRetryReplays(entry: EntryPoint, key: string): Promise<void> {
  await waitForStandbyNames("");
  const retry = await entry.call(own.db, { key, input: { value: key } });
  expect(retry.status).toBe(200);
  expect(retry.replayed).toBe(true);
  expect(await effectsFor(own.db, key)).toBe(1);
}

describe.each(ENTRY_POINTS)(
  "a commit the synchronous standby did not confirm, through the $name",
  (entry) => {
    const slug = entry.name.replace(/\W+/g, "-");
    it("control: a commit without a synchronous standby configured answers 200 and is kept for replay", async () => {
      await waitForStandbyNames("");
      const before = cached();
      const answer = await entry.call(own.db, {
        key: `${slug}-control`,
        input: { value: `${slug}-control` },
      });
      expect(answer.status).toBe(200);
      expect(cached()).toBe(before + 1);
    });

    it("a cancelled wait answers 503 commit_unconfirmed (Retry-After), is not kept in memory, and the retry reads the key", async () => {
      const key = `${slug}-cancelled`;
      const before = cached();
      const answer = await interruptedCommit(entry, key, "pg_cancel_backend");
      expect(answer.status).toBe(503);
      expect(reasonOf(answer)).toBe("commit_unconfirmed");
      expect(answer.headers.get("retry-after")).toBe("1");
      expect(cached()).toBe(before);
      // Committed locally all the same: the effect and the completed key are on this server.
      expect(await effectsFor(own.db, key)).toBe(1);
      expect((await keyRow(own.db, "acme", key))?.status).toBe("COMPLETED");
      await expectRetryReplays(entry, key);
    });

    it("a connection lost during COMMIT is an unknown outcome: 503, and the retry resolves it by reading the key", async () => {
      const answer = await interruptedCommit(entry, `${slug}-terminated`, "pg_terminate_backend");
      expect(answer.status).toBe(503);
      expect(reasonOf(answer)).toBe("store_unavailable");
      await expectRetryReplays(entry, `${slug}-terminated`);
    });
  },
);
