// Past its bound of requests in flight an instance refuses at once, 503 store_busy in tRPC's
// error shape with Retry-After, and serves again as soon as one finishes.
import { describe, expect, it } from "vitest";
import { Admission, STUCK_AFTER_MS } from "./admission";
import { RATE_WINDOW } from "../drain-rate";

function held() {
  let release: () => void = () => {};
  const done = new Promise<Response>((resolve) => (release = () => resolve(new Response("ok"))));
  return { serve: () => done, release };
}

/**
 * A busy spell: every place taken and one more request queued, one place coming free every
 * `everyMs` on the test's clock, `departures` times (then the rest drain at the same pace).
 * Afterwards the admission knows its capacity: a place every `everyMs`.
 */
async function busySpell(
  admission: Admission,
  clock: { now: number },
  places: number,
  everyMs: number,
  departures = RATE_WINDOW,
): Promise<void> {
  const running: { release: () => void; done: Promise<Response> }[] = [];
  const start = () => {
    const h = held();
    running.push({ release: h.release, done: admission.admit(h.serve, { waitMs: 60_000 }) });
  };
  for (let i = 0; i <= places; i++) start();
  for (let i = 0; i < departures; i++) {
    clock.now += everyMs;
    const oldest = running.shift()!;
    oldest.release();
    await oldest.done;
    start();
  }
  for (const r of running) {
    clock.now += everyMs;
    r.release();
    await r.done;
  }
}

describe("Admission", () => {
  it("counts as active while a request is in progress and for a while after the last one left", async () => {
    let now = 0;
    const admission = new Admission({ served: 2, now: () => now });
    // Never served: not active, however long it has existed.
    expect(admission.activeWithin(1_000)).toBe(false);
    const request = held();
    const served = admission.admit(request.serve);
    now = 5_000;
    expect(admission.activeWithin(1_000)).toBe(true);
    request.release();
    await served;
    now = 5_999;
    expect(admission.activeWithin(1_000)).toBe(true);
    now = 6_000;
    expect(admission.activeWithin(1_000)).toBe(false);
  });

  it("serves up to its bound, refuses the next at once, and serves again when one finishes", async () => {
    const admission = new Admission({ served: 2 });
    const [a, b] = [held(), held()];
    const first = admission.admit(a.serve);
    const second = admission.admit(b.serve);
    expect(admission.size).toBe(2);
    let ran = false;
    const refused = await admission.admit(async () => ((ran = true), new Response("ok")));
    expect(ran).toBe(false);
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect(
      ((await refused.json()) as { error: { data: { reason: string } } }).error.data.reason,
    ).toBe("store_busy");
    a.release();
    expect(await (await first).text()).toBe("ok");
    expect((await admission.admit(async () => new Response("again"))).status).toBe(200);
    b.release();
    await second;
    expect(admission.size).toBe(0);
  });

  it("says when to come back: the requests in flight, at the rate requests have been finishing", async () => {
    let now = 0;
    const admission = new Admission({ served: 20, maxQueued: 0, now: () => now });
    // RATE_WINDOW requests, one finishing every 500 ms: two places come free a second.
    for (let i = 0; i < RATE_WINDOW; i++) {
      now += 500;
      await admission.admit(async () => new Response("ok"));
    }
    const inFlight = Array.from({ length: 20 }, () => held());
    const served = inFlight.map((h) => admission.admit(h.serve));
    const refused = await admission.admit(async () => new Response("no"));
    expect(refused.status).toBe(503);
    // 20 in flight at ~2 a second (64 over the 31.5 s from the oldest to now): 10 s.
    expect(refused.headers.get("retry-after")).toBe("10");
    // Nothing finishing for a while makes the rate fall and the wait grow, up to 30 s.
    now += 600_000;
    expect((await admission.admit(async () => new Response("no"))).headers.get("retry-after")).toBe(
      "30",
    );
    for (const h of inFlight) h.release();
    await Promise.all(served);
  });

  it("after an idle spell, says when to come back from how fast requests finished, not from the idle time", async () => {
    let now = 0;
    const admission = new Admission({ served: 20, waitMs: 2_000, maxQueued: 0, now: () => now });
    // Ten finish a second, then ten minutes with nothing to do.
    for (let i = 0; i < RATE_WINDOW; i++) {
      now += 100;
      await admission.admit(async () => new Response("ok"));
    }
    now += 600_000;
    const inFlight = Array.from({ length: 20 }, () => held());
    const served = inFlight.map((h) => admission.admit(h.serve));
    const refused = await admission.admit(async () => new Response("no"));
    expect(refused.status).toBe(503);
    // The idle pause counts as the 2 s wait at most: 64 in 8.3 s, 20 in flight take 2.6 s. Counted
    // in full it would have been the 30 s cap.
    expect(refused.headers.get("retry-after")).toBe("3");
    for (const h of inFlight) h.release();
    await Promise.all(served);
  });

  it("computes its Retry-After from the first eight requests finished, not 1 s until it has 64", async () => {
    let now = 0;
    const admission = new Admission({ served: 20, maxQueued: 0, now: () => now });
    const fill = () => Array.from({ length: 20 }, () => held());
    const refusedNow = async () =>
      (await admission.admit(async () => new Response("no"))).headers.get("retry-after");
    for (let i = 0; i < 7; i++) {
      now += 500;
      await admission.admit(async () => new Response("ok"));
    }
    let inFlight = fill();
    let served = inFlight.map((h) => admission.admit(h.serve));
    expect(await refusedNow()).toBe("1"); // seven are too few to tell
    for (const h of inFlight) h.release();
    await Promise.all(served);
    // 27 finished (the 20 just now included), 64 not yet: 27 in the 3.5 s since the first.
    now += 500;
    inFlight = fill();
    served = inFlight.map((h) => admission.admit(h.serve));
    expect(await refusedNow()).toBe("3"); // 20 in flight at ~7.7 a second: 2.6 s
    for (const h of inFlight) h.release();
    await Promise.all(served);
  });

  it("past the requests always let in, lets in as many as finish within the wait at the rate requests finish, never past its ceiling; queues the rest up to its bound, and the deadline refuses what gets no place in time", async () => {
    /**
     * Of `offered` requests, all held, after 64 finished `everyMs` apart: how many it lets in, how
     * many queue, and the statuses once the held ones finish.
     */
    const offer = async (everyMs: number, offered: number) => {
      const clock = { now: 0 };
      const admission = new Admission({
        served: 2,
        ceiling: 6,
        waitMs: 2_000,
        maxQueued: 10,
        now: () => clock.now,
      });
      await busySpell(admission, clock, 2, everyMs);
      const holds = Array.from({ length: offered }, () => held());
      const answers = holds.map((h) => admission.admit(h.serve));
      const [size, queued] = [admission.size, admission.queued];
      for (const h of holds) h.release();
      const statuses = (await Promise.all(answers)).map((r) => r.status);
      return {
        size,
        queued,
        served: statuses.filter((s) => s === 200).length,
        refused: statuses.filter((s) => s === 503).length,
      };
    };
    // ~2 a second while busy: 4 in flight finish within the 2 s wait, a 5th would not; the other
    // 10 queue (its bound): none is refused for a guess, and all are served as places come free.
    expect(await offer(500, 14)).toEqual({ size: 4, queued: 10, served: 14, refused: 0 });
    // ~4 a second: 8 would finish in time, but the ceiling is 6; 8 queue; past the bound, refused.
    expect(await offer(250, 17)).toEqual({ size: 6, queued: 10, served: 16, refused: 1 });
  });

  it("never refuses at once for a guess: a burst after light load, after an idle spell or within a busy spell queues up to the bound, and only the deadline refuses", async () => {
    const clock = { now: 0 };
    const refusals: string[] = [];
    const admission = new Admission({
      served: 2,
      ceiling: 6,
      waitMs: 2_000,
      now: () => clock.now,
      onRefuse: (when) => refusals.push(when),
    });
    // Light load: one request at a time, one every 500 ms. Its rate (2 a second) is how fast
    // requests came, not how fast the instance can go.
    for (let i = 0; i < RATE_WINDOW; i++) {
      clock.now += 500;
      await admission.admit(async () => new Response("ok"));
    }
    const burst = async (size: number) => {
      const holds = Array.from({ length: size }, () => held());
      const answers = holds.map((h) => admission.admit(h.serve));
      const shape = [admission.size, admission.queued];
      for (const h of holds) h.release();
      await Promise.all(answers);
      return shape;
    };
    expect(await burst(10)).toEqual([2, 8]);
    // A busy spell at 2 a second, then an idle spell longer than the wait.
    await busySpell(admission, clock, 2, 500);
    clock.now += 10_000;
    expect(await burst(10)).toEqual([2, 8]);
    // Within the busy spell: 4 in flight finish within the wait at its rate; 20 more all queue.
    await busySpell(admission, clock, 2, 500);
    expect(await burst(24)).toEqual([4, 20]);
    expect(refusals).toEqual([]);
  });

  it("says a refusal came at the deadline when the request queued for its whole wait, and Prefer: wait makes that no longer", async () => {
    const refusals: string[] = [];
    const admission = new Admission({
      served: 1,
      waitMs: 20,
      onRefuse: (when) => refusals.push(when),
    });
    const first = held();
    const running = admission.admit(first.serve);
    const [plain, patient] = await Promise.all([
      admission.admit(async () => new Response("plain")),
      admission.admit(async () => new Response("patient"), { waitMs: 10_000 }),
    ]);
    expect([plain.status, patient.status]).toEqual([503, 503]);
    expect(refusals).toEqual(["deadline", "deadline"]);
    first.release();
    await running;
  });

  it("with no rate yet, lets in a fixed number and queues the rest for the wait", async () => {
    const admission = new Admission({ served: 2, ceiling: 6, waitMs: 2_000, maxQueued: 3 });
    const holds = Array.from({ length: 6 }, () => held());
    const answers = holds.map((h) => admission.admit(h.serve));
    expect([admission.size, admission.queued]).toEqual([2, 3]);
    for (const h of holds) h.release();
    const statuses = (await Promise.all(answers)).map((r) => r.status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 503]);
  });

  it("one line, first come first served, whatever Prefer: wait says", async () => {
    const admission = new Admission({ served: 1, waitMs: 2_000 });
    const first = held();
    const running = admission.admit(first.serve);
    const order: string[] = [];
    const plain = admission.admit(async () => (order.push("plain"), new Response("plain")));
    const patient = admission.admit(async () => (order.push("patient"), new Response("patient")), {
      waitMs: 10_000,
    });
    expect(admission.queued).toBe(2);
    first.release();
    await Promise.all([running, plain, patient]);
    expect(order).toEqual(["plain", "patient"]);
  });

  it("counts a request that failed as finished", async () => {
    const admission = new Admission({ served: 1 });
    await expect(admission.admit(() => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(admission.size).toBe(0);
  });

  it("counts a request out while it sleeps aside, and back in after, even past the bound", async () => {
    const admission = new Admission({ served: 1 });
    let wake: () => void = () => {};
    const asleep = new Promise<void>((resolve) => (wake = resolve));
    let sleeping: () => void = () => {};
    const fellAsleep = new Promise<void>((resolve) => (sleeping = resolve));
    const sleeper = admission.admit(async (aside) => {
      await aside(() => (sleeping(), asleep));
      return new Response("woke");
    });
    await fellAsleep;
    expect(admission.size).toBe(0);
    const other = held();
    const served = admission.admit(other.serve);
    expect(admission.size).toBe(1);
    wake();
    expect(await (await sleeper).text()).toBe("woke"); // back in over the bound, not refused
    other.release();
    await served;
    expect(admission.size).toBe(0);
  });

  it("queues a request that said it would wait, serves it when a place frees, and refuses one that would not", async () => {
    const admission = new Admission({ served: 1 });
    const first = held();
    const served = admission.admit(first.serve);
    const waiting = admission.admit(async () => new Response("waited"), { waitMs: 60_000 });
    expect(admission.queued).toBe(1);
    expect((await admission.admit(async () => new Response("no"))).status).toBe(503);
    first.release();
    await served;
    expect(await (await waiting).text()).toBe("waited");
    expect(admission.size).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it("refuses a queued request whose wait ran out, and one past the queue's bound", async () => {
    const admission = new Admission({ served: 1, maxQueued: 1 });
    const first = held();
    const served = admission.admit(first.serve);
    const queued = admission.admit(async () => new Response("late"), { waitMs: 20 });
    expect((await admission.admit(async () => new Response("no"), { waitMs: 60_000 })).status).toBe(
      503,
    );
    expect((await queued).status).toBe(503); // its 20 ms ran out before a place freed
    expect(admission.queued).toBe(0);
    first.release();
    await served;
    expect(admission.size).toBe(0);
  });
});

describe("a request whose client left", () => {
  it("leaves the line when its client leaves, is never served, and the next in line gets the place", async () => {
    const admission = new Admission({ served: 1, waitMs: 60_000 });
    const first = held();
    const served = admission.admit(first.serve);
    const client = new AbortController();
    let ran = false;
    const leaving = admission.admit(async () => ((ran = true), new Response("nobody")), {
      signal: client.signal,
    });
    const next = admission.admit(async () => new Response("next"));
    expect(admission.queued).toBe(2);
    client.abort();
    expect((await leaving).status).toBe(499);
    expect(admission.queued).toBe(1);
    first.release();
    await served;
    expect(await (await next).text()).toBe("next");
    expect(ran).toBe(false);
    expect(admission.size).toBe(0);
  });

  it("hands on a place that came as its client left, and is not served", async () => {
    const admission = new Admission({ served: 1, waitMs: 60_000 });
    const first = held();
    const served = admission.admit(first.serve);
    // A client gone between the grant and the request's next step: no abort event reaches the
    // line in time, the request sees it when its place comes.
    let gone = false;
    const signal = {
      get aborted() {
        return gone;
      },
      addEventListener() {},
      removeEventListener() {},
    } as unknown as AbortSignal;
    let ran = false;
    const leaving = admission.admit(async () => ((ran = true), new Response("nobody")), { signal });
    const next = admission.admit(async () => new Response("next"));
    first.release();
    gone = true;
    await served;
    expect((await leaving).status).toBe(499);
    expect(await (await next).text()).toBe("next");
    expect(ran).toBe(false);
    expect(admission.size).toBe(0);
    expect(admission.queued).toBe(0);
  });

  it("is not served when it was gone before it came", async () => {
    const admission = new Admission({ served: 1 });
    let ran = false;
    const answer = await admission.admit(async () => ((ran = true), new Response("nobody")), {
      signal: AbortSignal.abort(),
    });
    expect(answer.status).toBe(499);
    expect(ran).toBe(false);
    expect(admission.size).toBe(0);
  });
});

describe("Admission.stuck (what health reports)", () => {
  it("is stuck only when every place is held and none has come free for the wait", async () => {
    let now = 0;
    const admission = new Admission({ served: 2, waitMs: 1_000, now: () => now });
    const [a, b] = [held(), held()];
    const first = admission.admit(a.serve);
    now = 10_000;
    expect(admission.stuck()).toBe(false); // a place is free
    const second = admission.admit(b.serve);
    now += STUCK_AFTER_MS;
    expect(admission.stuck()).toBe(false); // full, but only just long enough
    now += 1;
    expect(admission.stuck()).toBe(true);
    a.release();
    await first;
    expect(admission.stuck()).toBe(false); // one left: progress, and room
    const third = admission.admit(held().serve);
    now += STUCK_AFTER_MS;
    expect(admission.stuck()).toBe(false); // full again since just now
    b.release();
    await second;
    void third;
  });
});
