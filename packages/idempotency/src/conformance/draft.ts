// The IETF Idempotency-Key draft's rules (draft-ietf-httpapi-idempotency-key-header), as black-box
// checks over plain HTTP against any server: the core (what the draft requires of a resource that
// documents itself as idempotent with a key) and the profile (what a client can read from a replay:
// a header that marks it, the first status kept, a body omitted said so, a 5xx never stored).
//   import { runDraftConformance } from "@once/idempotency/conformance";
//   runDraftConformance({ name: "POST /reports", url, body: () => ({ title: "q3" }) });
// inside a Vitest test file, with the server running. Written from the draft's text, not from any
// one published suite.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { headerNamesOf, type HeaderNamesOption } from "../header-names.js";
import type { Answer as Reply } from "./target.js";

export interface DraftTarget {
  /** A name for the suite's title. */
  name: string;
  /**
   * The protected resource: a POST here with a key makes one effect. A function when the address
   * is known only once the server listens (read at each request).
   */
  url: string | (() => string);
  /** Headers every request carries (your authentication). */
  headers?: Record<string, string>;
  /**
   * A fresh JSON body: each call a new request whose answer differs from any other's (it names
   * the resource made, an id), so equal bytes mean one execution.
   */
  body: () => unknown;
  /**
   * The header names the server answers with: "default", "draft" (the profile's) or your own, as
   * given to `idempotent({ headerNames })`.
   */
  headerNames?: HeaderNamesOption;
  /**
   * A body whose answer is larger than the server's maxStoredBodyBytes (profile: its replay keeps
   * the status, has an empty body and says the body was omitted).
   */
  largeBody?: () => unknown;
  /** A body the handler refuses with a 4xx of its own (stored and replayed as it was). */
  refusedBody?: () => unknown;
  /** A body the handler answers with a 5xx (never stored: a retry runs anew). */
  failingBody?: () => unknown;
}

const PROBLEM = "application/problem+json";

interface Kit {
  target: DraftTarget;
  names: ReturnType<typeof headerNamesOf>;
  send: (
    key: string | undefined,
    body: unknown,
    init?: { method?: string; rawBody?: string },
  ) => Promise<Reply>;
}

function kitFor(target: DraftTarget): Kit {
  const names = headerNamesOf(target.headerNames);
  return {
    target,
    names,
    async send(key, body, init = {}) {
      const method = init.method ?? "POST";
      const headers = new Headers({ "content-type": "application/json", ...target.headers });
      if (key !== undefined) headers.set(names.key, key);
      const url = typeof target.url === "string" ? target.url : target.url();
      const res = await fetch(url, {
        method,
        headers,
        body: method === "GET" ? undefined : (init.rawBody ?? JSON.stringify(body)),
      });
      return { status: res.status, headers: res.headers, body: await res.text() };
    },
  };
}

const fresh = () => randomUUID();
const isProblem = (reply: Reply) => (reply.headers.get("content-type") ?? "").startsWith(PROBLEM);

async function missingKey({ target, send }: Kit) {
  const reply = await send(undefined, target.body());
  expect(reply.status).toBe(400);
  expect(isProblem(reply)).toBe(true);
}

async function malformedKey({ target, send }: Kit) {
  for (const key of ['"unterminated', "two words", ""]) {
    const reply = await send(key, target.body());
    expect(reply.status, key).toBe(400);
    expect(isProblem(reply)).toBe(true);
  }
}

/** One request sent twice under a fresh key, one after the other: the first answer, the retry's. */
async function sentTwice(
  send: Kit["send"],
  body: unknown,
): Promise<{ first: Reply; retry: Reply }> {
  const key = fresh();
  const first = await send(key, body);
  return { first, retry: await send(key, body) };
}

async function retryGetsFirstAnswer({ target, send }: Kit) {
  const { first, retry } = await sentTwice(send, target.body());
  expect(first.status).toBeGreaterThanOrEqual(200);
  expect(first.status).toBeLessThan(300);
  expect(retry.status).toBe(first.status);
  expect(retry.body).toBe(first.body);
  expect(retry.headers.get("location")).toBe(first.headers.get("location"));
}

async function sfStringKey({ target, send }: Kit) {
  const key = fresh();
  const body = target.body();
  const first = await send(`"${key}"`, body);
  const bare = await send(key, body);
  expect(bare.body).toBe(first.body);
}

async function reusedKey({ target, send }: Kit) {
  const key = fresh();
  await send(key, target.body());
  const reply = await send(key, target.body());
  expect(reply.status).toBe(422);
  expect(isProblem(reply)).toBe(true);
}

async function concurrentDuplicates({ target, send }: Kit) {
  const key = fresh();
  const body = target.body();
  const replies = await Promise.all(Array.from({ length: 8 }, () => send(key, body)));
  const successes = replies.filter((r) => r.status < 300);
  expect(successes.length).toBeGreaterThanOrEqual(1);
  expect(new Set(successes.map((r) => r.body)).size).toBe(1);
  for (const reply of replies.filter((r) => r.status >= 300)) {
    expect(reply.status).toBe(409);
    expect(isProblem(reply)).toBe(true);
  }
  // Once settled, the key answers with the one execution's answer.
  expect((await send(key, body)).body).toBe(successes[0]!.body);
}

async function safeMethodPasses({ send, names }: Kit) {
  const reply = await send(undefined, undefined, { method: "GET" });
  expect(reply.status).not.toBe(400);
  expect(reply.headers.get(names.replayed)).toBeNull();
}

async function replayMarked({ target, send, names }: Kit) {
  const { first, retry } = await sentTwice(send, target.body());
  expect(first.headers.get(names.replayed)).toBeNull();
  expect(retry.headers.get(names.replayed)).toBe("true");
  for (const reply of [first, retry])
    expect(Number.isNaN(Date.parse(reply.headers.get(names.expires) ?? ""))).toBe(false);
}

async function omittedBody({ target, send, names }: Kit) {
  const { first, retry } = await sentTwice(send, target.largeBody!());
  expect(first.body.length).toBeGreaterThan(0);
  expect(first.headers.get(names.bodyOmitted)).toBeNull();
  expect(retry.status).toBe(first.status);
  expect(retry.body).toBe("");
  expect(retry.headers.get(names.bodyOmitted)).toBe("omitted");
  expect(retry.headers.get(names.replayed)).toBe("true");
}

async function refusalStored({ target, send, names }: Kit) {
  const { first, retry } = await sentTwice(send, target.refusedBody!());
  expect(first.status).toBeGreaterThanOrEqual(400);
  expect(first.status).toBeLessThan(500);
  expect([retry.status, retry.body]).toEqual([first.status, first.body]);
  expect(retry.headers.get(names.replayed)).toBe("true");
}

async function serverErrorNotStored({ target, send, names }: Kit) {
  const { first, retry } = await sentTwice(send, target.failingBody!());
  expect(first.status).toBeGreaterThanOrEqual(500);
  expect(retry.status).toBeGreaterThanOrEqual(500);
  expect(retry.headers.get(names.replayed)).toBeNull();
}

/** The draft's core rules and its profile, one Vitest test each, against `target`. */
export function runDraftConformance(target: DraftTarget): void {
  const kit = kitFor(target);
  const { names } = kit;
  describe(`the draft's core rules: ${target.name}`, () => {
    it("a request without the key is 400, as problem details", () => missingKey(kit));
    it("a key that is not an sf-string is 400", () => malformedKey(kit));
    it("a retry with the key and the same payload gets the first answer (status, bytes, Location)", () =>
      retryGetsFirstAnswer(kit));
    it("the key as an sf-string and bare is the same key", () => sfStringKey(kit));
    it("the key reused with another payload is 422, as problem details", () => reusedKey(kit));
    it("concurrent requests with one key run once: one answer, the others 409 as problem details", () =>
      concurrentDuplicates(kit));
    it("a request whose method is idempotent by itself (GET) needs no key", () =>
      safeMethodPasses(kit));
  });
  describe(`the draft's profile: ${target.name} (${names.replayed}, ${names.bodyOmitted})`, () => {
    it(`a replay says so (${names.replayed}: true), the first answer does not; both say until when the key lives`, () =>
      replayMarked(kit));
    if (target.largeBody)
      it(`an answer too large to store is replayed with its status, an empty body and ${names.bodyOmitted}: omitted`, () =>
        omittedBody(kit));
    if (target.refusedBody)
      it("the handler's own 4xx is stored: a retry gets the same status and bytes, marked replayed", () =>
        refusalStored(kit));
    if (target.failingBody)
      it("a 5xx is not stored: the retry runs anew, not marked replayed", () =>
        serverErrorNotStored(kit));
  });
}
