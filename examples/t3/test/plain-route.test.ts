// The package README's plain Route Handler (src/app/api/posts/route.ts, @once/idempotency/http)
// against `next start`: one post however often it is sent, and every refusal a problem-details
// answer with its status, never a 500.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { anonymousCookie, appUrl, postsNamed } from "./app";

const browser = randomUUID();
const post = (key: string | undefined, body: unknown) =>
  fetch(`${appUrl}/api/posts`, {
    method: "POST",
    headers: {
      ...anonymousCookie(browser),
      "content-type": "application/json",
      ...(key === undefined ? {} : { "idempotency-key": key }),
    },
    body: JSON.stringify(body),
  });

describe("POST /api/posts, a plain Route Handler", () => {
  it("makes one post: the retry is replayed byte for byte", async () => {
    const key = randomUUID();
    const name = `plain-${key}`;
    const first = await post(key, { name });
    const replay = await post(key, { name });
    expect([first.status, replay.status]).toEqual([201, 201]);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await replay.text()).toBe(await first.text());
    expect(await postsNamed(name)).toBe(1);
  });

  it("answers refusals as problem details: no key 400, another body 422", async () => {
    const missing = await post(undefined, { name: "x" });
    expect(missing.status).toBe(400);
    expect(missing.headers.get("content-type")).toBe(
      "application/problem+json"
    );
    expect(await missing.json()).toMatchObject({
      reason: "idempotency_key_missing",
    });
    const key = randomUUID();
    await post(key, { name: `a-${key}` });
    const other = await post(key, { name: `b-${key}` });
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({
      reason: "idempotency_key_reused",
    });
  });
});
