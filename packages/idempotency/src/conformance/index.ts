// The protocol's rules as black-box checks an adopting app runs against its own procedure:
//   import { runConformance } from "@once/idempotency/conformance";
//   runConformance({ name: "orders.place", send, input, otherInput, effects, scopes, databaseUrl, …
//   });
// inside a Vitest test file. Each check sends real requests and counts real effects.
import { randomUUID } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import {
  age,
  deserializeOutput,
  keyState,
  type Answer,
  type ConformanceTarget,
  type Transformer,
} from "./target.js";

export {
  httpSender,
  trpcSender,
  type Answer,
  type ConformanceTarget,
  type SendOptions,
  type Transformer,
} from "./target.js";

export { runDraftConformance, type DraftTarget } from "./draft.js";

const fresh = (label: string) => `${label}-${randomUUID()}`;

/**
 * `error.data.reason` (tRPC, read through the router's transformer), or a plain body's `reason` /
 * `error`.
 */
export function answerReason(answer: Answer, transformer?: Transformer): string | undefined {
  try {
    const json = JSON.parse(answer.body) as { error?: unknown; reason?: string };
    if (typeof json.error === "object")
      return (deserializeOutput(transformer, json.error) as { data?: { reason?: string } })?.data
        ?.reason;
    return json.reason ?? (typeof json.error === "string" ? json.error : undefined);
  } catch {
    return undefined;
  }
}

const replayed = (a: Answer) => a.headers.get("idempotent-replayed") === "true";
const retryAfter = (a: Answer) => Number(a.headers.get("retry-after"));

export function runConformance(target: ConformanceTarget): void {
  const kit = kitFor(target);
  describe(`idempotency conformance: ${target.name}`, () => {
    keyRules(kit);
    replayRules(kit);
    scopeRules(kit);
    retentionRules(kit);
    // The optional rules run only where the target gives what they need.
    if (target.failingInput) failureRules(kit, target.failingInput);
    if (target.slowHeaders) inFlightRules(kit, target.slowHeaders);
    if (target.stopStore && target.startStore)
      failClosedRules(kit, { stop: target.stopStore, start: target.startStore });
  });
}

/** What every check uses: the target, and readers of its answers and of its key table. */
interface Kit {
  target: ConformanceTarget;
  send: ConformanceTarget["send"];
  reasonOf(answer: Answer): string | undefined;
  stateOf(key: string): ReturnType<typeof keyState>;
  /** Resolves once the first caller's `key` is PROCESSING (its slow request has begun). */
  processing(key: string): Promise<void>;
}

function kitFor(target: ConformanceTarget): Kit {
  const stateOf = (key: string) => keyState(target.databaseUrl, target.scopes[0], key);
  return {
    target,
    send: target.send,
    reasonOf: (answer) => answerReason(answer, target.transformer),
    stateOf,
    processing: (key) =>
      vi.waitFor(async () => expect((await stateOf(key))?.status).toBe("PROCESSING"), {
        timeout: 60_000,
        interval: 20,
      }),
  };
}

function keyRules({ target, send, reasonOf }: Kit): void {
  describe("the key", () => {
    it.each([
      ["no header", undefined, "idempotency_key_missing"],
      ["an empty key", "", "idempotency_key_missing"],
      ["a key with a space", "has space", "idempotency_key_invalid"],
      ["a key of 256 characters", "k".repeat(256), "idempotency_key_invalid"],
    ])("refuses %s with 400 and records nothing", async (_what, key, reason) => {
      const answer = await send({ key, input: target.input() });
      expect(answer.status).toBe(400);
      expect(reasonOf(answer)).toBe(reason);
      if (key) expect(await target.effects(key)).toBe(0);
    });

    it("reads the RFC 8941 quoted form as the same key as the bare one", async () => {
      const key = fresh("quoted");
      const input = target.input();
      const first = await send({ key: `"${key}"`, input });
      const second = await send({ key, input });
      expect(first.status).toBe(200);
      expect(second).toMatchObject({ status: 200, body: first.body });
      expect(replayed(second)).toBe(true);
    });
  });
}

function replayRules(kit: Kit): void {
  const { target, send, reasonOf } = kit;
  describe("replay", () => {
    it("gives a retry the first answer byte for byte, marked Idempotent-Replayed, and runs the effect once", async () => {
      const key = fresh("replay");
      const input = target.input();
      const first = await send({ key, input });
      const retry = await send({ key, input });
      expect(first.status).toBe(200);
      expect(replayed(first)).toBe(false);
      expect(retry).toMatchObject({ status: 200, body: first.body });
      expect(replayed(retry)).toBe(true);
      expect(await target.effects(key)).toBe(1);
      expect(Date.parse(first.headers.get("idempotency-key-expires") ?? "")).toBeGreaterThan(
        Date.now(),
      );
    });

    it("answers 422 to the same key with other input, and keeps the first answer", async () => {
      const key = fresh("mismatch");
      const input = target.input();
      const first = await send({ key, input });
      const other = await send({ key, input: target.otherInput(input) });
      expect(other.status).toBe(422);
      expect(reasonOf(other)).toBe("idempotency_key_reused");
      expect(await send({ key, input })).toMatchObject({ status: 200, body: first.body });
      expect(await target.effects(key)).toBe(1);
    });

    it("runs 12 concurrent duplicates once; the others replay or get 409 with Retry-After", () =>
      concurrentDuplicatesRunOnce(kit));
  });
}

async function concurrentDuplicatesRunOnce({ target, send, reasonOf }: Kit): Promise<void> {
  const key = fresh("burst");
  const input = target.input();
  const answers = await Promise.all(Array.from({ length: 12 }, () => send({ key, input })));
  expect(await target.effects(key)).toBe(1);
  const ok = answers.filter((a) => a.status === 200);
  expect(ok.filter((a) => !replayed(a))).toHaveLength(1);
  for (const a of answers.filter((x) => x.status !== 200)) {
    expect(a.status).toBe(409);
    expect(reasonOf(a)).toBe("request_in_progress");
    expect(retryAfter(a)).toBeGreaterThanOrEqual(1);
  }
  for (const a of ok) expect(a.body).toBe(ok[0]!.body);
}

function scopeRules({ target, send }: Kit): void {
  describe("scope", () => {
    it("keeps callers apart: one key value from two callers runs twice, once each", async () => {
      const key = fresh("scoped");
      const [a, b] = await Promise.all([
        send({ key, input: target.input(), caller: 0 }),
        send({ key, input: target.input(), caller: 1 }),
      ]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect([replayed(a), replayed(b)]).toEqual([false, false]);
      expect([await target.effects(key, 0), await target.effects(key, 1)]).toEqual([1, 1]);
    });
  });
}

function retentionRules({ target, send, stateOf }: Kit): void {
  describe("retention", () => {
    it("treats a key past its retention as absent: the request runs anew", async () => {
      const key = fresh("retained");
      const input = target.input();
      expect((await send({ key, input })).status).toBe(200);
      await age(target.databaseUrl, target.scopes[0], key, "retention");
      await target.aged?.(target.scopes[0], key);
      const again = await send({ key, input });
      expect(again.status).toBe(200);
      expect(replayed(again)).toBe(false);
      expect(await stateOf(key)).toMatchObject({ status: "COMPLETED", attempts: 1 });
    });
  });
}

function failureRules({ send, stateOf }: Kit, failingInput: () => unknown): void {
  describe("deterministic failures", () => {
    it("stores a 4xx the handler chose and replays it byte for byte", async () => {
      const key = fresh("failing");
      const input = failingInput();
      const first = await send({ key, input });
      const retry = await send({ key, input });
      expect(first.status).toBeGreaterThanOrEqual(400);
      expect(first.status).toBeLessThan(500);
      expect(retry).toMatchObject({ status: first.status, body: first.body });
      expect(replayed(retry)).toBe(true);
      expect(await stateOf(key)).toMatchObject({ status: "FAILED" });
    });
  });
}

function inFlightRules(kit: Kit, slow: Record<string, string>): void {
  describe("in flight, takeover and fencing", () => {
    it("answers 409 with Retry-After while the first request runs, then replays its answer", () =>
      inFlightDuplicateWaits(kit, slow));
    it("lets a retry take over an expired lease; the late first request is fenced out", () =>
      expiredLeaseTakenOver(kit, slow));
  });
}

/**
 * Sends a slow request under a fresh key, and resolves once it holds the key (PROCESSING), with
 * its answer still to come.
 */
async function slowFirstRequest(kit: Kit, slow: Record<string, string>, label: string) {
  const key = fresh(label);
  const input = kit.target.input();
  const answer = kit.send({ key, input, headers: slow });
  await kit.processing(key);
  return { key, input, answer };
}

async function inFlightDuplicateWaits(kit: Kit, slow: Record<string, string>): Promise<void> {
  const { send, reasonOf } = kit;
  const { key, input, answer: first } = await slowFirstRequest(kit, slow, "inflight");
  const during = await send({ key, input });
  expect(during.status).toBe(409);
  expect(reasonOf(during)).toBe("request_in_progress");
  expect(retryAfter(during)).toBeGreaterThanOrEqual(1);
  const done = await first;
  expect(await send({ key, input })).toMatchObject({ status: 200, body: done.body });
}

async function expiredLeaseTakenOver(kit: Kit, slow: Record<string, string>): Promise<void> {
  const { target, send, stateOf } = kit;
  const { key, input, answer: stalled } = await slowFirstRequest(kit, slow, "takeover");
  await age(target.databaseUrl, target.scopes[0], key, "lease");
  const retry = await send({ key, input });
  expect(retry.status).toBe(200);
  expect(replayed(retry)).toBe(false);
  const late = await stalled;
  expect(late.status).toBe(409);
  expect(await target.effects(key)).toBe(1);
  expect(await stateOf(key)).toMatchObject({ status: "COMPLETED", attempts: 2 });
  expect(await send({ key, input })).toMatchObject({ status: 200, body: retry.body });
}

function failClosedRules(
  { target, send, reasonOf }: Kit,
  store: { stop: () => Promise<void>; start: () => Promise<void> },
): void {
  describe("fail closed", () => {
    it("answers 503 store_unavailable with Retry-After while the store is down, runs nothing, and runs once it is back", async () => {
      const key = fresh("down");
      const input = target.input();
      await store.stop();
      let down: Answer;
      try {
        down = await send({ key, input });
      } finally {
        await store.start();
      }
      expect(down.status).toBe(503);
      expect(reasonOf(down)).toBe("store_unavailable");
      expect(retryAfter(down)).toBeGreaterThanOrEqual(1);
      const back = await send({ key, input });
      expect(back.status).toBe(200);
      expect(replayed(back)).toBe(false);
      expect(await target.effects(key)).toBe(1);
    });
  });
}
