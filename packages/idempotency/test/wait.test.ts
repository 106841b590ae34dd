// Prefer: wait (RFC 7240): a request whose key is in flight waits for the first request to settle,
// woken through LISTEN, and gets its answer; or 409 when its wait runs out. Each rule through both
// entry points. No test here could pass on a deadline alone: the waits that must end by a wake
// are longer than the test's timeout.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { depsOf } from "../src/engine";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SETTLED_CHANNEL } from "../src/constants";
import { parsePreferWait } from "../src/wait/prefer";
import { useTestDatabase } from "./support/database";
import {
  configure,
  ENTRY_POINTS,
  effectsFor,
  Gate,
  keyRow,
  parkNextExecution,
  reasonOf,
  type Engine,
  type EntryPoint,
  type Mode,
} from "./support/harness";

const t = useTestDatabase({ poolMax: 20 });
const fresh = (label: string) => `${label}-${randomUUID()}`;
/** Longer than any wake-up takes: a waiter that is never woken gives up after 120 s, failing its test. */
const NEVER = { maxWaitMs: 120_000, leaseMs: 120_000 };
const prefer = (seconds: number) => ({ prefer: `wait=${seconds}` });

let engine: Engine | undefined;
async function listeningEngine(config: Parameters<typeof configure>[1] = NEVER): Promise<Engine> {
  engine = configure(t.db, config, { listen: () => new pg.Client({ connectionString: t.url }) });
  await engine.ready;
  return engine;
}
afterEach(async () => {
  await engine?.close();
  engine = undefined;
  configure(t.db);
});

/**
 * A first request on a fresh key, parked inside its transaction (it holds the key) until the test
 * opens or fails its gate; `duplicate(n)` sends the same request with `Prefer: wait=n`.
 */
async function holdKey(entry: EntryPoint, label: string, mode?: Mode) {
  const key = fresh(label);
  const value = fresh("v");
  const input = mode ? { value, mode } : { value };
  const gate = new Gate();
  parkNextExecution(gate);
  const first = entry.call(t.db, { key, input });
  await gate.reached;
  const duplicate = (seconds: number) => entry.call(t.db, { key, input, headers: prefer(seconds) });
  return { key, value, gate, first, duplicate };
}

/** Resolves once `n` requests are asleep on a key. */
const waiting = (e: Engine, n = 1) =>
  vi.waitFor(() => expect(depsOf(e).waiters.size).toBe(n), { timeout: 60_000, interval: 5 });

/**
 * A held key (holdKey) with one duplicate asleep on it (`Prefer: wait=100`), then the first
 * request let go by `settle` (its gate opened or failed): both answers, first (`a`) and duplicate.
 */
async function oneWaiter(
  e: Engine,
  held: Awaited<ReturnType<typeof holdKey>>,
  settle: (gate: Gate) => void = (gate) => gate.open(),
) {
  const duplicate = held.duplicate(100);
  await waiting(e);
  settle(held.gate);
  const [a, b] = await Promise.all([held.first, duplicate]);
  expect(b.headers.get("preference-applied")).toBe("wait=100");
  return { a, b };
}

describe.each(ENTRY_POINTS)("Prefer: wait, through the $name", (entry) => {
  it("wakes when the first request completes, and replays its answer", async () => {
    const e = await listeningEngine();
    const held = await holdKey(entry, "wait-complete");
    const { a, b } = await oneWaiter(e, held);
    expect(a).toMatchObject({ status: 200, replayed: false });
    expect(b).toMatchObject({ status: 200, replayed: true, text: a.text });
    expect(await effectsFor(t.db, held.value)).toBe(1);
    expect(depsOf(e).waiters.size).toBe(0);
  });

  it("wakes when the first request fails deterministically, and replays the failure", async () => {
    const e = await listeningEngine();
    const held = await holdKey(entry, "wait-fail", "deterministic");
    const { a, b } = await oneWaiter(e, held);
    expect(a).toMatchObject({ status: 412, replayed: false });
    expect(b).toMatchObject({ status: 412, replayed: true, text: a.text });
    expect(await keyRow(t.db, "acme", held.key)).toMatchObject({
      status: "FAILED",
      responseStatus: 412,
    });
  });

  it("wakes when the first request is released, and then runs the request itself", async () => {
    const e = await listeningEngine();
    const held = await holdKey(entry, "wait-release");
    const { key, value } = held;
    // A transient failure: the first request releases the key.
    const { a, b } = await oneWaiter(e, held, (gate) =>
      gate.fail(new Error("the provider timed out")),
    );
    expect(a.status).toBe(500);
    expect(b).toMatchObject({ status: 200, replayed: false });
    expect(await effectsFor(t.db, value)).toBe(1); // the first one's write rolled back
    const row = await keyRow(t.db, "acme", key);
    expect(row).toMatchObject({ status: "COMPLETED" });
    expect(row!.responseBody).toBe(JSON.stringify(b.body));
  });

  it("ends the wait at N seconds with 409, the first request still running", async () => {
    const e = await listeningEngine();
    const { key, gate, first, duplicate: send } = await holdKey(entry, "wait-deadline");
    const started = Date.now();
    const duplicate = await send(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(990); // it did wait (timers may round by a millisecond)
    expect(duplicate.status).toBe(409);
    expect(reasonOf(duplicate)).toBe("request_in_progress");
    expect(duplicate.headers.get("preference-applied")).toBe("wait=1");
    expect(Number(duplicate.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(depsOf(e).waiters.size).toBe(0);
    expect(await keyRow(t.db, "acme", key)).toMatchObject({ status: "PROCESSING" });
    gate.open();
    expect((await first).status).toBe(200);
  });

  it("caps N at maxWaitMs", async () => {
    await listeningEngine({ maxWaitMs: 200, leaseMs: 120_000 });
    const { gate, first, duplicate: send } = await holdKey(entry, "wait-cap");
    const duplicate = await send(100); // would outlive the test
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("preference-applied")).toBe("wait=1"); // 200 ms, in whole seconds rounded up
    gate.open();
    await first;
  });

  it("answers 409 at once, without Preference-Applied, when it has no LISTEN connection to be woken by", async () => {
    configure(t.db, NEVER); // no listen option
    const { gate, first, duplicate: send } = await holdKey(entry, "wait-deaf");
    const duplicate = await send(100);
    expect(duplicate.status).toBe(409);
    expect(duplicate.headers.get("preference-applied")).toBeNull();
    gate.open();
    await first;
  });

  it("gives 24 concurrent duplicates of a new key the one answer: one execution, every other a replay", async () => {
    await listeningEngine();
    const key = fresh("wait-burst");
    const value = fresh("v");
    const answers = await Promise.all(
      Array.from({ length: 24 }, () =>
        entry.call(t.db, { key, input: { value }, headers: prefer(100) }),
      ),
    );
    expect(await effectsFor(t.db, value)).toBe(1);
    expect(answers.filter((a) => a.status === 200 && !a.replayed)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 200 && a.replayed)).toHaveLength(23);
    expect(new Set(answers.map((a) => a.text)).size).toBe(1);
  });
});

/**
 * The statements the engine's store sends from now on (`sent`), and those whose name matches
 * (`named`, over all of them or the calls given).
 */
function statementsSentBy(e: Engine) {
  const run = (
    depsOf(e).store as unknown as {
      run: { query: (sql: { name?: string }, values: unknown[]) => Promise<unknown[]> };
    }
  ).run;
  const sent = vi.spyOn(run, "query");
  const named = (pattern: RegExp, calls = sent.mock.calls) =>
    calls.filter(([sql]) => pattern.test(String((sql as { name?: string }).name ?? sql)));
  return { sent, named };
}

/**
 * 200 duplicates of a key held in flight, all waiting on it, then the key settled: their answers,
 * and the statements (by name) the store sent while they slept and once they were woken.
 */
async function stampede(e: Engine, name: string) {
  const { value, gate, first, duplicate: send } = await holdKey(ENTRY_POINTS[0]!, name);
  const { sent, named } = statementsSentBy(e);
  const duplicates = Array.from({ length: 200 }, () => send(100));
  await waiting(e, 200);
  const asleep = sent.mock.calls.length;
  gate.open();
  const answers = await Promise.all(duplicates);
  await first;
  const calls = [...sent.mock.calls];
  sent.mockRestore();
  return {
    value,
    answers,
    whileAsleep: (pattern: RegExp) => named(pattern, calls.slice(0, asleep)).length,
    onceWoken: (pattern: RegExp) => named(pattern, calls.slice(asleep)).length,
  };
}

describe("many requests waiting on one key", () => {
  it("are answered by a few shared reads when it settles, not a statement each", async () => {
    const { value, answers, whileAsleep, onceWoken } = await stampede(
      await listeningEngine(),
      "wait-stampede",
    );
    // Their marks (the key is awaited) share statements too: one row lock taken a few times.
    expect(whileAsleep(/mark_awaited/)).toBeLessThanOrEqual(5);
    expect(answers.every((a) => a.status === 200 && a.replayed)).toBe(true);
    expect(await effectsFor(t.db, value)).toBe(1);
    // The woken requests' reads share statements (each joins the next one sent for its key).
    expect(onceWoken(/read|reserve/)).toBeLessThanOrEqual(5);
  });
});

describe("many requests of one scope at once", () => {
  it("share one live-key count while it is being taken, not a statement each", async () => {
    // A count taken no longer than 0 ms ago is stale: every request of the scope needs a new one,
    // the most a count can be asked for. Those that arrive while one is being taken join it.
    const e = await listeningEngine({ ...NEVER, liveKeyCountTtlMs: 0 });
    const { answers, whileAsleep, onceWoken } = await stampede(e, "count-stampede");
    expect(whileAsleep(/count_live/)).toBeLessThanOrEqual(5);
    expect(answers.every((a) => a.status === 200 && a.replayed)).toBe(true);
    // Woken at once, they look at the key once more, and at the scope's count.
    expect(onceWoken(/count_live/)).toBeLessThanOrEqual(5);
  });
});

describe("a settle's NOTIFY, only when someone waits", () => {
  /** A LISTEN connection of the test's own on the settle channel, recording what it hears. */
  async function listen() {
    const client = new pg.Client({ connectionString: t.url });
    await client.connect();
    const heard: string[] = [];
    client.on("notification", (n) => heard.push(JSON.parse(n.payload ?? "[]")[1]));
    await client.query(`LISTEN ${SETTLED_CHANNEL}`);
    return { heard, close: () => client.end() };
  }

  it("is sent for a key a waiter marked, and not for a key nobody waited on", async () => {
    const e = await listeningEngine();
    const listener = await listen();
    try {
      const entry = ENTRY_POINTS[0]!;
      const alone = fresh("settle-alone");
      expect((await entry.call(t.db, { key: alone, input: { value: fresh("v") } })).status).toBe(
        200,
      );
      const { key, gate, first, duplicate: send } = await holdKey(entry, "settle-awaited");
      const duplicate = send(100);
      await waiting(e);
      gate.open();
      expect((await duplicate).replayed).toBe(true);
      await first;
      // Notifications arrive in commit order: had the first key's settle sent one, it would be here
      // before the awaited key's.
      await vi.waitFor(() => expect(listener.heard).toContain(key), { timeout: 60_000 });
      expect(listener.heard).toEqual([key]);
    } finally {
      await listener.close();
    }
  });

  it("a mark that meets a settle in flight waits for its commit, then finds the key settled", async () => {
    const e = await listeningEngine();
    const entry = ENTRY_POINTS[0]!;
    const { key, gate, first } = await holdKey(entry, "mark-meets-settle");
    const held = (await depsOf(e).store.read("acme", key))!;
    // A settle of the held lease, written but not yet committed: it holds the row's lock.
    const settler = await t.pool.connect();
    try {
      await settler.query("BEGIN");
      await settler.query(
        `UPDATE "IdempotencyKey" SET "status" = 'FAILED', "leaseToken" = NULL WHERE "scope" = $1 AND "key" = $2`,
        ["acme", key],
      );
      const mark = depsOf(e).store.markAwaited(held);
      await vi.waitFor(
        async () => {
          const { rows } = await t.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%"awaited" = true%'`,
          );
          expect(rows).toHaveLength(1);
        },
        { timeout: 60_000, interval: 5 },
      );
      await settler.query("COMMIT");
      // No row: the waiter looks at the key again instead of sleeping through a settle it missed.
      expect(await mark).toBeNull();
      expect(await depsOf(e).store.markAwaited(held)).toBeNull();
    } finally {
      settler.release();
      gate.open();
      await first;
    }
  });
});

describe("when the LISTEN connection is lost during a wait", () => {
  it("wakes the waiter, which answers 409 (it cannot be woken any more) instead of sleeping to its deadline", async () => {
    const e = await listeningEngine();
    const { gate, first, duplicate: send } = await holdKey(ENTRY_POINTS[1]!, "wait-lost");
    const duplicate = send(100);
    await waiting(e);
    await t.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN%'`,
    );
    const answer = await duplicate;
    expect(answer.status).toBe(409);
    expect(answer.headers.get("preference-applied")).toBe("wait=100");
    gate.open();
    await first;
  });
});

describe("parsePreferWait", () => {
  it.each([
    ["wait=5", 5],
    ["respond-async, wait=10", 10],
    ['wait="7"', 7],
    ["WAIT = 3", 3],
    ["wait=4; foo=bar", 4],
    ["wait=1, wait=9", 1], // RFC 7240: only the first instance counts
    ["wait=-1", undefined],
    ["wait=soon", undefined],
    ["return=minimal", undefined],
    ["", undefined],
    [null, undefined],
  ])("reads %j as %j", (header, expected) => {
    expect(parsePreferWait(header)).toBe(expected);
  });
});
