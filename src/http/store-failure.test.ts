// Sign-in's and sign-out's 503: the engine's decision (busy with the pool's Retry-After, or
// unavailable) in the plain routes' error shape, from real pg failures.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { freePort } from "../../tools/process";
import { storeFailureAnswer } from "./store-failure";

const messages = { busy: "busy now", unavailable: "away now" };

describe("storeFailureAnswer", () => {
  it("a closed port is 503 store_unavailable, Retry-After 1", async () => {
    const client = new pg.Client({ host: "127.0.0.1", port: await freePort() });
    const error = await client.connect().then(
      () => null,
      (e: unknown) => e,
    );
    const res = storeFailureAnswer(error, messages);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("link")).toBe('</docs/errors#store_unavailable>; rel="describedby"');
    expect(await res.json()).toMatchObject({ error: "away now", reason: "store_unavailable" });
  });

  it("the pool's busy answer is 503 store_busy with the pool's own Retry-After", async () => {
    // The shape of BoundedPool's busy answer (its own tests make real ones).
    const refusal = Object.assign(new Error("the database pool is full"), {
      code: "POOL_QUEUE_FULL",
      retryAfterSeconds: 4,
    });
    const res = storeFailureAnswer(refusal, messages);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("4");
    expect(await res.json()).toMatchObject({ error: "busy now", reason: "store_busy" });
  });
});
