// The reservation commits with synchronous_commit off. That is safe because nothing depends on a
// reservation until the business transaction commits synchronously, which flushes the WAL up to
// its own commit record, the reservation's included. Proved here with PostgreSQL really crashed
// (immediate shutdown: SIGQUIT, no checkpoint) at the two moments that matter.
import { beforeAll, describe, expect, it, vi } from "vitest";
import {
  configure,
  effectsFor,
  Gate,
  keyRow,
  parkNextExecution,
  wrapperEntry,
} from "./support/harness";
import { useOwnServer } from "./support/own-server";

const own = useOwnServer("once-crash-", 6);

beforeAll(() => {
  configure(own.db, { leaseMs: 500 });
});

/** A client's retries (it honours 409 and 503), until it gets its answer. */
function retryUntilAnswered(key: string) {
  return vi.waitFor(
    async () => {
      const answer = await wrapperEntry.call(own.db, { key, input: { value: `${key}-v` } });
      expect(answer.status).toBe(200);
      return answer;
    },
    { timeout: 60_000, interval: 100 },
  );
}

describe("a crash of PostgreSQL around an asynchronously committed reservation", () => {
  it("after reservations and before their business commits: no effect survives, and each retry executes once", async () => {
    const keys = ["crash-a", "crash-b", "crash-c"];
    const gates = keys.map(() => new Gate());
    for (const gate of gates) parkNextExecution(gate);
    const inFlight = keys.map((key) =>
      wrapperEntry.call(own.db, { key, input: { value: `${key}-v` } }),
    );
    await Promise.all(gates.map((g) => g.reached)); // reserved; business writes done, not committed
    await own.server.crash();
    for (const gate of gates) gate.open();
    for (const answer of await Promise.all(inFlight)) expect(answer.status).toBe(503);
    await own.server.start();
    for (const key of keys) {
      expect(await effectsFor(own.db, `${key}-v`)).toBe(0);
      // The reservation may or may not have survived; either way the retry runs (after the short
      // lease, if it did), exactly once.
      const retry = await retryUntilAnswered(key);
      expect(retry.replayed).toBe(false);
      expect(await effectsFor(own.db, `${key}-v`)).toBe(1);
    }
  });

  it("right after a business commit: the key survives COMPLETED with the effect, and the retry replays", async () => {
    const key = "crash-after-commit";
    const first = await wrapperEntry.call(own.db, { key, input: { value: `${key}-v` } });
    expect(first.status).toBe(200);
    await own.server.crash();
    await own.server.start();
    expect(await keyRow(own.db, "acme", key)).toMatchObject({ status: "COMPLETED" });
    expect(await effectsFor(own.db, `${key}-v`)).toBe(1);
    const retry = await retryUntilAnswered(key);
    expect(retry).toMatchObject({ replayed: true, text: first.text });
  });
});
