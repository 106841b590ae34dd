// T3's post.create returns the Post, createdAt a Date. Through superjson (the router's transformer)
// the client must get a real Date, on the first call and on every replay: the engine stores the
// answer as superjson serialized it and replays it through superjson.
import { randomUUID } from "node:crypto";
import { createTRPCClient, httpLink } from "@trpc/client";
import superjson from "superjson";
import { describe, expect, it } from "vitest";
import type { AppRouter } from "~/server/api/root";
import { anonymousCookie, appUrl, postsNamed } from "./app";

const browser = randomUUID();

function clientWithKey(key: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${appUrl}/api/trpc`,
        transformer: superjson,
        headers: { ...anonymousCookie(browser), "idempotency-key": key },
      }),
    ],
  });
}

describe("post.create through superjson", () => {
  it("returns createdAt as a Date, and the replay returns the same Date", async () => {
    const key = randomUUID();
    const name = `dates-${key}`;
    const first = await clientWithKey(key).post.create.mutate({ name });
    const replay = await clientWithKey(key).post.create.mutate({ name });
    expect(first.createdAt).toBeInstanceOf(Date);
    expect(replay.createdAt).toBeInstanceOf(Date);
    expect(replay.createdAt.getTime()).toBe(first.createdAt.getTime());
    expect(replay.id).toBe(first.id);
    expect(await postsNamed(name)).toBe(1);
  });
});
