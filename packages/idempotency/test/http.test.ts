// The HTTP layer (@once/idempotency/http) as an HTTP route sees it. The protocol's rules run
// through it in every test that uses ENTRY_POINTS (protocol, wait, fail-closed, store-busy…); these
// are the rules of the HTTP edge itself: which methods need a key, what makes two requests the
// same, the handler's real answer stored and replayed byte for byte, refusals as problem details,
// the body limits, and the two-phase path.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  idempotent,
  type IdempotentRouteOptions,
  type TransactionRouteContext,
} from "../src/http/index";
import { hasInexactNumber } from "../src/http/request-identity";
import { useTestDatabase } from "./support/database";
import { configure, Gate, keyRow, type Engine, type Tx } from "./support/harness";

const t = useTestDatabase();
const fresh = (label: string) => `${label}-${randomUUID()}`;
const URL_BASE = "http://localhost/api/refunds";

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

/** A route on `engine` (as the test configured it, or a default one). */
function route(
  handler: (request: Request, context: TransactionRouteContext<Tx>) => Response | Promise<Response>,
  options: Partial<IdempotentRouteOptions<Tx>> & { transaction?: true } = {},
) {
  engine ??= configure(t.db);
  return idempotent<Tx>(handler, {
    engine,
    scope: () => "acme",
    docs: "https://example.com/docs/errors",
    ...options,
  });
}

function post(
  key: string | undefined,
  body: BodyInit | null,
  init: { headers?: Record<string, string>; url?: string; method?: string } = {},
) {
  const headers = new Headers({ "content-type": "application/json", ...init.headers });
  if (key !== undefined) headers.set("idempotency-key", key);
  return new Request(init.url ?? URL_BASE, { method: init.method ?? "POST", headers, body });
}

const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

describe("which requests need a key", () => {
  it("passes GET, HEAD and OPTIONS through untouched (to passThrough), records nothing; without passThrough they are 405", async () => {
    let ran = 0;
    const handle = route(() => (ran++, new Response("made")), {
      passThrough: () => new Response("read", { headers: { "x-untouched": "yes" } }),
    });
    for (const method of ["GET", "HEAD", "OPTIONS"]) {
      const res = await handle(new Request(URL_BASE, { method }));
      expect(res.status).toBe(200);
      expect(res.headers.get("x-untouched")).toBe("yes");
      expect(res.headers.get("idempotency-key-expires")).toBeNull();
    }
    expect(ran).toBe(0);
    const strict = route(() => new Response("made"));
    const res = await strict(new Request(URL_BASE, { method: "GET" }));
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST, PATCH");
  });

  it("requires the key on POST and PATCH: 400 as problem details, with the docs link, and the handler never runs", async () => {
    let ran = 0;
    const handle = route(() => (ran++, new Response("made")));
    for (const [method, key, reason] of [
      ["POST", undefined, "idempotency_key_missing"],
      ["PATCH", undefined, "idempotency_key_missing"],
      ["POST", "two words", "idempotency_key_invalid"],
      ["POST", '"unterminated', "idempotency_key_invalid"],
    ] as const) {
      const res = await handle(post(key, "{}", { method }));
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.headers.get("link")).toBe(
        `<https://example.com/docs/errors#${reason}>; rel="describedby"`,
      );
      expect(await res.json()).toMatchObject({
        type: `https://example.com/docs/errors#${reason}`,
        status: 400,
        reason,
        title: expect.any(String),
        detail: expect.any(String),
      });
    }
    expect(ran).toBe(0);
  });

  it("takes the key bare or as an RFC 8941 string: the same key", async () => {
    const key = fresh("sf");
    const handle = route(() => new Response(randomUUID()));
    const first = await handle(post(key, "{}"));
    const quoted = await handle(post(`"${key}"`, "{}"));
    expect(quoted.headers.get("idempotent-replayed")).toBe("true");
    expect(await quoted.text()).toBe(await first.text());
  });

  it("lets the scope refuse the request (401) before anything is recorded", async () => {
    const key = fresh("anon");
    const handle = route(() => new Response("made"), {
      scope: () => new Response(null, { status: 401 }),
    });
    expect((await handle(post(key, "{}"))).status).toBe(401);
    expect(await keyRow(t.db, "acme", key)).toBeNull();
  });
});

describe("what makes two requests the same", () => {
  const again = async (_key: string, first: Request, second: Request) => {
    const echo = route(async (request) => new Response(`${randomUUID()} ${await request.text()}`));
    await echo(first);
    return echo(second);
  };

  it("a JSON body by its canonical form: another member order or spacing is the same request", async () => {
    const key = fresh("order");
    const res = await again(
      key,
      post(key, '{"a":1,"b":[1,2]}'),
      post(key, '{ "b": [1, 2], "a": 1 }'),
    );
    expect(res.headers.get("idempotent-replayed")).toBe("true");
  });

  it.each([
    ["another body", post("K", '{"a":1}'), post("K", '{"a":2}')],
    ["another path", post("K", "{}"), post("K", "{}", { url: "http://localhost/api/other" })],
    [
      "another query",
      post("K", "{}", { url: `${URL_BASE}?amount=1` }),
      post("K", "{}", { url: `${URL_BASE}?amount=2` }),
    ],
    [
      "another content type",
      post("K", "a=1", { headers: { "content-type": "text/plain" } }),
      post("K", "a=1", { headers: { "content-type": "application/x-www-form-urlencoded" } }),
    ],
    ["another method", post("K", "{}"), post("K", "{}", { method: "PATCH" })],
    [
      "bytes that differ",
      post("K", new Uint8Array([1, 2, 3]), {
        headers: { "content-type": "application/octet-stream" },
      }),
      post("K", new Uint8Array([1, 2, 4]), {
        headers: { "content-type": "application/octet-stream" },
      }),
    ],
    [
      "a number beyond a double's precision",
      post("K", '{"id":12345678901234567890}'),
      post("K", '{"id":12345678901234567891}'),
    ],
  ])("%s under the same key is 422 idempotency_key_reused", async (_label, first, second) => {
    const key = fresh("reuse");
    first.headers.set("idempotency-key", key);
    second.headers.set("idempotency-key", key);
    const res = await again(key, first, second);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ status: 422, reason: "idempotency_key_reused" });
  });

  it("query parameters by name, whatever their order", async () => {
    const key = fresh("query");
    const res = await again(
      key,
      post(key, "{}", { url: `${URL_BASE}?a=1&b=2` }),
      post(key, "{}", { url: `${URL_BASE}?b=2&a=1` }),
    );
    expect(res.headers.get("idempotent-replayed")).toBe("true");
  });

  it('fingerprint: "key" makes the key alone the identity: another body replays; a function chooses what counts', async () => {
    const byKey = route(
      async (request) => new Response(`${randomUUID()} ${await request.text()}`),
      {
        fingerprint: "key",
      },
    );
    const key = fresh("by-key");
    const first = await byKey(post(key, '{"event":"evt_1","delivery":1}'));
    const again = await byKey(post(key, '{"event":"evt_1","delivery":2}'));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(await first.text());

    // A function: only the body's "amount" is the request; "note" may change.
    const byAmount = route(() => new Response(randomUUID()), {
      fingerprint: (_request, body) =>
        (JSON.parse(Buffer.from(body).toString()) as { amount: number }).amount,
    });
    const other = fresh("by-amount");
    await byAmount(post(other, '{"amount":5,"note":"a"}'));
    const sameAmount = await byAmount(post(other, '{"amount":5,"note":"b"}'));
    expect(sameAmount.headers.get("idempotent-replayed")).toBe("true");
    const otherAmount = await byAmount(post(other, '{"amount":6,"note":"a"}'));
    expect(otherAmount.status).toBe(422);
  });

  it("tells JSON numbers a double cannot keep apart (and only those)", () => {
    expect(hasInexactNumber('{"id":12345678901234567890}')).toBe(true);
    expect(hasInexactNumber('{"big":1e400}')).toBe(true);
    expect(
      hasInexactNumber(
        '{"id":"12345678901234567890","n":1.5,"e":-2e10,"s":"\\"9999999999999999999"}',
      ),
    ).toBe(false);
  });
});

describe("the handler's real answer, stored and replayed byte for byte", () => {
  it("any status and content type, the allowed headers, never Set-Cookie", async () => {
    const key = fresh("created");
    const handle = route(
      () =>
        new Response("created refund 42\n", {
          status: 201,
          headers: {
            "content-type": "text/plain; charset=utf-8",
            location: "/api/refunds/42",
            "set-cookie": "session=secret",
            "x-internal": "1",
          },
        }),
      { replayHeaders: ["location", "set-cookie"] },
    );
    const first = await handle(post(key, "{}"));
    expect(first.status).toBe(201);
    expect(first.headers.get("set-cookie")).toBe("session=secret"); // the first answer is the handler's
    const replay = await handle(post(key, "{}"));
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(replay.headers.get("location")).toBe("/api/refunds/42");
    expect(replay.headers.get("set-cookie")).toBeNull();
    expect(replay.headers.get("x-internal")).toBeNull();
    expect(replay.headers.get("idempotency-key-expires")).toBe(
      first.headers.get("idempotency-key-expires"),
    );
    expect(await replay.text()).toBe("created refund 42\n");
  });

  it("a binary body (not UTF-8, with NUL bytes) as bytes: a bytea column, not base64 text", async () => {
    const key = fresh("binary");
    const body = new Uint8Array([0, 255, 254, 0x80, 0, 1, 2, 0xc3]);
    const handle = route(
      () => new Response(body, { headers: { "content-type": "application/octet-stream" } }),
    );
    expect(await bytesOf(await handle(post(key, "{}")))).toEqual(body);
    const replay = await handle(post(key, "{}"));
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await bytesOf(replay)).toEqual(body);
    const row = await keyRow(t.db, "acme", key);
    expect(row).toMatchObject({
      responseBody: "",
      responseContentType: "application/octet-stream",
    });
    expect(new Uint8Array(row!.responseBytes!)).toEqual(body);
  });

  it("text with a byte-order mark and any UTF-8 as text, the same bytes back", async () => {
    const key = fresh("bom");
    const body = new TextEncoder().encode("\ufeffpríce: 5 €, 🧾");
    const handle = route(() => new Response(body, { headers: { "content-type": "text/plain" } }));
    await handle(post(key, "{}"));
    expect(await bytesOf(await handle(post(key, "{}")))).toEqual(body);
    expect((await keyRow(t.db, "acme", key))?.responseBytes).toBeNull();
  });

  it("a 4xx is stored and replayed, and the handler's writes roll back", async () => {
    const key = fresh("gone");
    let ran = 0;
    const handle = route(async (_request, { tx }) => {
      ran++;
      await tx.testEffect.create({ data: { scope: "acme", value: key } });
      return Response.json({ error: "no such order" }, { status: 404 });
    });
    const first = await handle(post(key, "{}"));
    const replay = await handle(post(key, "{}"));
    expect([first.status, replay.status, ran]).toEqual([404, 404, 1]);
    expect(await replay.text()).toBe('{"error":"no such order"}');
    expect(await t.db.testEffect.count({ where: { value: key } })).toBe(0);
    expect(await keyRow(t.db, "acme", key)).toMatchObject({
      status: "FAILED",
      responseStatus: 404,
    });
  });

  it("a 5xx is passed on as the handler made it and releases the key: the retry runs anew", async () => {
    const key = fresh("5xx");
    let ran = 0;
    const handle = route(() =>
      ++ran === 1
        ? new Response("upstream down", { status: 502, headers: { "retry-after": "3" } })
        : new Response("ok"),
    );
    const first = await handle(post(key, "{}"));
    expect([first.status, first.headers.get("retry-after"), await first.text()]).toEqual([
      502,
      "3",
      "upstream down",
    ]);
    expect(await keyRow(t.db, "acme", key)).toBeNull();
    const retry = await handle(post(key, "{}"));
    expect([retry.status, retry.headers.get("idempotent-replayed"), ran]).toEqual([200, null, 2]);
  });

  it("a 204 has no body, first or replayed", async () => {
    const key = fresh("204");
    const handle = route(() => new Response(null, { status: 204 }));
    await handle(post(key, "{}"));
    const replay = await handle(post(key, "{}"));
    expect([replay.status, replay.headers.get("idempotent-replayed"), replay.body]).toEqual([
      204,
      "true",
      null,
    ]);
  });
});

describe("size limits", () => {
  it("refuses a request body over maxBodyBytes with 413 payload_too_large, recording nothing", async () => {
    const key = fresh("big-request");
    const handle = route(() => new Response("made"), { maxBodyBytes: 1024 });
    const res = await handle(
      post(key, "x".repeat(2048), { headers: { "content-type": "text/plain" } }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ reason: "payload_too_large", status: 413 });
    expect(await keyRow(t.db, "acme", key)).toBeNull();
  });

  it("keeps an answer over maxStoredBodyBytes without its body: the first is whole, a replay says so", async () => {
    const engine = configure(t.db, { maxStoredBodyBytes: 1024 });
    const key = fresh("big-answer");
    const body = "y".repeat(4096);
    const handle = route(
      () =>
        new Response(body, {
          status: 201,
          headers: { "content-type": "text/plain", location: "/x/1" },
        }),
      { engine },
    );
    expect(await (await handle(post(key, "{}"))).text()).toBe(body);
    expect(engine.counters.snapshot()).toContainEqual(
      expect.objectContaining({ event: "bodies_omitted", count: 1 }),
    );
    const replay = await handle(post(key, "{}"));
    // The first answer's status and headers, an empty body, and a header saying it was omitted:
    // never another kind of body under the first status.
    expect(replay.status).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("idempotent-replay-body")).toBe("omitted");
    expect(replay.headers.get("location")).toBe("/x/1");
    expect(replay.headers.get("content-type")).toBe("text/plain");
    expect(await replay.text()).toBe("");
    expect(await keyRow(t.db, "acme", key)).toMatchObject({
      responseBody: "",
      responseOmittedBytes: 4096,
      responseBytes: null,
    });
  });

  it("streams an answer over maxStoredBodyBytes to the client: the route answers before the handler's body is read whole", async () => {
    const engine = configure(t.db, { maxStoredBodyBytes: 1024 });
    const key = fresh("streamed");
    const chunk = new Uint8Array(64 * 1024).fill(9);
    let answered!: () => void;
    const routeAnswered = new Promise<void>((resolve) => (answered = resolve));
    let sent = 0;
    const handle = route(
      () =>
        new Response(
          new ReadableStream<Uint8Array>({
            // Past the limit, the next chunk waits until the route has answered: a layer that read
            // the body whole before answering would never answer.
            async pull(controller) {
              if (sent >= 4 * chunk.byteLength) await routeAnswered;
              if (sent >= 32 * chunk.byteLength) return controller.close();
              sent += chunk.byteLength;
              controller.enqueue(chunk);
            },
          }),
          { headers: { "content-type": "application/octet-stream" } },
        ),
      { engine },
    );
    const first = await handle(post(key, "{}"));
    answered();
    expect(first.status).toBe(200);
    expect((await bytesOf(first)).byteLength).toBe(32 * chunk.byteLength);
    expect(await keyRow(t.db, "acme", key)).toMatchObject({
      status: "COMPLETED",
      responseBody: "",
      responseBytes: null,
    });
    const replay = await handle(post(key, "{}"));
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replay-body")).toBe("omitted");
    expect((await bytesOf(replay)).byteLength).toBe(0);
  });

  it('headerNames: "draft" answers with the draft profile\'s names (Idempotency-Replayed, Idempotency-Replay: omitted); names can be set one by one', async () => {
    const engine = configure(t.db, { maxStoredBodyBytes: 8 });
    const draft = route(() => new Response("a body longer than eight bytes"), {
      engine,
      headerNames: "draft",
    });
    const key = fresh("draft");
    await draft(post(key, "{}"));
    const replay = await draft(post(key, "{}"));
    expect(replay.headers.get("idempotency-replayed")).toBe("true");
    expect(replay.headers.get("idempotency-replay")).toBe("omitted");
    expect(replay.headers.get("idempotent-replayed")).toBeNull();
    expect(replay.headers.get("idempotent-replay-body")).toBeNull();
    expect(replay.headers.get("idempotency-key-expires")).not.toBeNull();

    const own = route(() => new Response("ok"), {
      engine,
      headerNames: { key: "X-Request-Key", replayed: "X-Replayed", expires: "X-Key-Expires" },
    });
    const ownKey = fresh("own");
    const byName = (k: string) => post(undefined, "{}", { headers: { "x-request-key": k } });
    const firstOwn = await own(byName(ownKey));
    expect(firstOwn.headers.get("x-key-expires")).not.toBeNull();
    const replayOwn = await own(byName(ownKey));
    expect(replayOwn.headers.get("x-replayed")).toBe("true");
    expect((await own(post(fresh("std"), "{}"))).status).toBe(400); // Idempotency-Key is not read
  });

  it("200 answers of 2 MiB leave the replay cache within its byte budget", async () => {
    const budget = 3 * 1024 * 1024;
    const engine = configure(
      t.db,
      { replayCacheBytes: budget },
      { listen: () => new pg.Client({ connectionString: t.url }) },
    );
    await engine.ready;
    const twoMiB = new Uint8Array(2 * 1024 * 1024).fill(7);
    const handle = route(
      () => new Response(twoMiB, { headers: { "content-type": "application/octet-stream" } }),
      { engine },
    );
    const keys = Array.from({ length: 200 }, () => fresh("two-mib"));
    for (let i = 0; i < keys.length; i += 10) {
      const answers = await Promise.all(
        keys.slice(i, i + 10).map((key) => handle(post(key, "{}"))),
      );
      expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
      expect(engine.replayCacheUsage().bytes).toBeLessThanOrEqual(budget);
    }
    // Over the 1 MiB default, every answer was kept without its body, so the cache holds all 200 in
    // little room.
    expect(engine.replayCacheUsage().entries).toBe(200);
    const replay = await handle(post(keys[0]!, "{}"));
    expect(replay.headers.get("idempotent-replay-body")).toBe("omitted");
    await engine.close();
  }, 60_000);
});

describe("the two-phase path (transaction: false)", () => {
  it("runs a call-out handler without a transaction, stores its answer after it, replays it; a duplicate in flight is 409", async () => {
    const engine = configure(t.db);
    const key = fresh("callout");
    const gate = new Gate();
    const calls: string[] = [];
    const handle = idempotent<Tx>(
      async (_request, context) => {
        calls.push(context.key);
        expect(Object.keys(context).sort()).toEqual(["key", "scope"]);
        await gate.park();
        return Response.json({ charged: true }, { status: 201 });
      },
      { engine, scope: () => "acme", transaction: false },
    );
    const first = handle(post(key, "{}"));
    await gate.reached;
    const duplicate = await handle(post(key, "{}"));
    expect(duplicate.status).toBe(409);
    expect(Number(duplicate.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    gate.open();
    expect((await first).status).toBe(201);
    const replay = await handle(post(key, "{}"));
    expect([replay.status, replay.headers.get("idempotent-replayed"), await replay.text()]).toEqual(
      [201, "true", '{"charged":true}'],
    );
    expect(calls).toEqual([key]);
  });
});
