// A client that leaves before its key is reserved gets nothing run: the tRPC middleware reads the
// call's abort signal (tRPC's, which follows the request's) after the caller is known and before
// the engine reserves, so no key is written and nothing executes, and its retry runs anew. Under a
// crowd that stopped, an instance then spends nothing on requests nobody waits for. A request
// whose key is reserved runs to its end (completion or release) whoever is listening.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "./support/database";
import { effectsFor, keyRow, serveTestTrpc, trpcEntry } from "./support/harness";

const t = useTestDatabase();

/** The harness's tRPC call, with the request's abort signal. */
async function callWith(signal: AbortSignal, key: string, value: string) {
  const req = new Request("http://localhost/api/trpc/effect", {
    method: "POST",
    headers: {
      authorization: "Bearer acme_token",
      "content-type": "application/json",
      "idempotency-key": key,
    },
    body: JSON.stringify({ value }),
    signal,
  });
  const res = await serveTestTrpc(t.db, req);
  return { status: res.status, text: await res.text() };
}

describe("a client gone before its key is reserved", () => {
  it("gets nothing run: no key, no effect; its retry runs anew", async () => {
    const key = randomUUID();
    const value = randomUUID();
    const gone = await callWith(AbortSignal.abort(), key, value);
    expect(gone.status).toBe(499);
    expect(JSON.parse(gone.text).error.data.code).toBe("CLIENT_CLOSED_REQUEST");
    expect(await keyRow(t.db, "acme", key)).toBeNull();
    expect(await effectsFor(t.db, value)).toBe(0);

    const retry = await trpcEntry.call(t.db, { key, input: { value } });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBe(false);
    expect(await effectsFor(t.db, value)).toBe(1);
  });
});
