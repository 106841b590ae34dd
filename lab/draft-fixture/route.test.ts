// The draft fixture behaves as draft-ietf-httpapi-idempotency-key-header describes, each rule as
// a client of the draft would check it.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { createEngineFor } from "@/server/engine";
import { useTestDatabase } from "@/test/database";
import { draftFixture, type DraftFixture } from "./route";

const t = useTestDatabase();
let fixture: DraftFixture;
const fx = () =>
  (fixture ??= draftFixture(createEngineFor(t.db), { docs: "http://fixture/docs/errors" }));
const BASE = "http://fixture/resources";

function send(
  method: string,
  key: string | undefined,
  body: unknown,
  headers: Record<string, string> = {},
  url = BASE,
) {
  const h = new Headers({ "content-type": "application/json", ...headers });
  if (key !== undefined) h.set("idempotency-key", key);
  return fx().handle(new Request(url, { method, headers: h, body: JSON.stringify(body) }));
}
const created = async () =>
  ((await (await fx().handle(new Request("http://fixture/stats"))).json()) as { created: number })
    .created;

describe("the Idempotency-Key draft fixture", () => {
  it("creates once: the retry is the first answer (201, body, Location), with Idempotency-Key-Expires", async () => {
    const key = `"${randomUUID()}"`; // an sf-string, as the draft writes it
    const before = await created();
    const first = await send("POST", key, { amount: 10 });
    const retry = await send("POST", key, { amount: 10 });
    expect([first.status, retry.status]).toEqual([201, 201]);
    expect(await retry.text()).toBe(await first.text());
    expect(retry.headers.get("location")).toBe(first.headers.get("location"));
    expect(new Date(retry.headers.get("idempotency-key-expires")!).getTime()).toBeGreaterThan(
      Date.now(),
    );
    expect(await created()).toBe(before + 1);
    expect(
      (await fx().handle(new Request(`http://fixture${first.headers.get("location")}`))).status,
    ).toBe(200);
  });

  it("400 without a key on POST and PATCH, as problem details linking to documentation", async () => {
    for (const method of ["POST", "PATCH"]) {
      const res = await send(method, undefined, {});
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("link")).toMatch(
        /^<http:\/\/fixture\/docs\/errors#idempotency_key_missing>; rel="describedby"$/,
      );
      expect(await res.json()).toMatchObject({
        status: 400,
        type: "http://fixture/docs/errors#idempotency_key_missing",
      });
    }
  });

  it("422 for the key reused with another payload; the same payload in another member order is the same request", async () => {
    const key = randomUUID();
    await send("POST", key, { a: 1, b: 2 });
    expect((await send("POST", key, { b: 2, a: 1 })).status).toBe(201);
    const reused = await send("POST", key, { a: 1, b: 3 });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ status: 422, reason: "idempotency_key_reused" });
  });
});

describe("the Idempotency-Key draft fixture: a key in flight, and the methods", () => {
  it("409 with Retry-After while the first request with the key is still being processed", async () => {
    const key = randomUUID();
    // The first request waits inside its transaction on a lock this test holds: once its key is
    // reserved, the duplicate arrives; then the lock goes and the first one finishes.
    const barrier = new pg.Client({ connectionString: t.url });
    await barrier.connect();
    try {
      await barrier.query("SELECT pg_advisory_lock(4242)");
      const first = send("POST", key, { slow: true }, { "x-fixture-hold": "4242" });
      await vi.waitFor(
        async () =>
          expect(await t.db.idempotencyKey.count({ where: { key, status: "PROCESSING" } })).toBe(1),
        { interval: 10, timeout: 60_000 },
      );
      const concurrent = await send("POST", key, { slow: true });
      expect(concurrent.status).toBe(409);
      expect(Number(concurrent.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      await barrier.query("SELECT pg_advisory_unlock(4242)");
      expect((await first).status).toBe(201);
    } finally {
      await barrier.end();
    }
  });

  it("passes GET through without a key, and PATCH needs one like POST", async () => {
    const made = await send("POST", randomUUID(), { name: "a" });
    const location = made.headers.get("location")!;
    expect((await fx().handle(new Request(`http://fixture${location}`))).status).toBe(200);
    const key = randomUUID();
    const patched = await send("PATCH", key, { name: "b" }, {}, `http://fixture${location}`);
    const again = await send("PATCH", key, { name: "b" }, {}, `http://fixture${location}`);
    expect([patched.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([
      200,
      200,
      "true",
    ]);
  });
});
