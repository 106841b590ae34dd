// Fail closed: with PostgreSQL really stopped, a mutation answers 503 + Retry-After and its handler
// never runs; once PostgreSQL is back, the same key executes normally. This file starts its own
// PostgreSQL server so it can stop it without disturbing the other test files.
import { describe, expect, it, vi } from "vitest";
import {
  ENTRY_POINTS,
  effectsFor,
  executions,
  Gate,
  keyRow,
  parkNextExecution,
  reasonOf,
} from "./support/harness";
import { useOwnServer } from "./support/own-server";

const own = useOwnServer("once-failclosed-", 4);

describe.each(ENTRY_POINTS)("fail closed, through the $name", (entry) => {
  const id = entry.name.replace(/\W+/g, "-");

  it("answers 503 store_unavailable with Retry-After while PostgreSQL is down, and never runs the handler", async () => {
    const key = `down-${id}`;
    const value = `down-value-${id}`;
    expect(
      (await entry.call(own.db, { key: `warm-${id}`, input: { value: `warm-${id}` } })).status,
    ).toBe(200);

    await own.server.stop();
    const before = executions.count;
    const down = await entry.call(own.db, { key, input: { value } });
    expect(down.status).toBe(503);
    expect(reasonOf(down)).toBe("store_unavailable");
    expect(Number(down.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(executions.count).toBe(before);

    await own.server.start();
    const back = await entry.call(own.db, { key, input: { value } });
    expect(back).toMatchObject({ status: 200, replayed: false });
    expect(await effectsFor(own.db, value)).toBe(1);
    const replay = await entry.call(own.db, { key, input: { value } });
    expect(replay).toMatchObject({ status: 200, replayed: true, body: back.body });
  });

  it("answers 503 when PostgreSQL dies mid-request; nothing was committed, and the key is freed as soon as the store is back", async () => {
    const key = `midway-${id}`;
    const value = `midway-value-${id}`;
    const gate = new Gate();
    parkNextExecution(gate);
    const inFlight = entry.call(own.db, { key, input: { value } });
    await gate.reached; // the business write is done, not committed
    await own.server.stop(); // a fast shutdown: open transactions are aborted
    gate.open(); // the handler's next query finds the store gone
    const answer = await inFlight;
    expect(answer.status).toBe(503);
    expect(reasonOf(answer)).toBe("store_unavailable");

    await own.server.start();
    expect(await effectsFor(own.db, value)).toBe(0);
    // The release could not reach the store when it failed; it is retried until the store is
    // back, so the key is gone long before its 30 s lease would have ended.
    await vi.waitFor(async () => expect(await keyRow(own.db, "acme", key)).toBeNull(), {
      timeout: 60_000,
      interval: 50,
    });
    const retry = await entry.call(own.db, { key, input: { value } });
    expect(retry).toMatchObject({ status: 200, replayed: false });
    expect(await effectsFor(own.db, value)).toBe(1);
    expect(await keyRow(own.db, "acme", key)).toMatchObject({ status: "COMPLETED", attempts: 1 });
  });
});
