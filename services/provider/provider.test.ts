// The provider service over HTTP, as the shop's client sees it: one charge per idempotency key,
// faults before and after charging, the list API's cursor and creation filter, signed webhooks.
import http from "node:http";
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RIVAL_SHOP, useTestProvider } from "../../src/test/provider";
import {
  createProviderClient,
  ProviderRefusedError,
  ProviderTimeoutError,
  ProviderUnavailableError,
  type ListedCharge,
  SIGNATURE_HEADER,
  verifySignature,
} from "../../src/payments";
import { startProviderService } from "../../tools/provider-service";
import { parseShops } from "./shops";
import { waitFor } from "../../tools/process";

const provider = useTestProvider();
const request = (
  overrides: Partial<{ idempotencyKey: string; reference: string; amountCents: number }> = {},
) => ({
  idempotencyKey: `key-${randomUUID()}`,
  reference: randomUUID(),
  amountCents: 1_250,
  currency: "EUR",
  ...overrides,
});

describe("POST /v1/charges", () => {
  it("charges once per idempotency key, however many requests arrive at once", async () => {
    const req = request();
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => provider.client.charge(req)),
    );
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(answers.filter((a) => !a.replayed)).toHaveLength(1);
    expect(await provider.charges(req.reference)).toEqual([
      expect.objectContaining({ id: answers[0]!.id, status: "SUCCEEDED", amountCents: 1_250 }),
    ]);
    expect(await provider.events(answers[0]!.id)).toEqual([
      expect.objectContaining({ type: "charge.succeeded" }),
    ]);
  });

  it("refuses a key reused for other parameters, and charges nothing more", async () => {
    const req = request();
    await provider.client.charge(req);
    await expect(provider.client.charge({ ...req, amountCents: 9_999 })).rejects.toBeInstanceOf(
      ProviderRefusedError,
    );
    expect(await provider.charges(req.reference)).toHaveLength(1);
  });

  it("declines above 5 000 EUR", async () => {
    expect(await provider.client.charge(request({ amountCents: 500_001 }))).toMatchObject({
      status: "FAILED",
    });
  });

  it("a transient failure charges nothing; a timeout after charging hides a charge that the retry finds", async () => {
    const failing = await provider.withFaults({ failureRate: 1 });
    const refused = request();
    await expect(failing.client.charge(refused)).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(await provider.charges(refused.reference)).toEqual([]);

    const timingOut = await provider.withFaults({ timeoutRate: 1 });
    const lost = request();
    await expect(timingOut.client.charge(lost)).rejects.toBeInstanceOf(ProviderTimeoutError);
    const [charged] = await provider.charges(lost.reference);
    expect(await provider.client.charge(lost)).toMatchObject({ id: charged!.id, replayed: true });
  });

  it("is unavailable, not timed out, when nothing listens", async () => {
    await provider.stop();
    try {
      await expect(provider.client.charge(request())).rejects.toBeInstanceOf(
        ProviderUnavailableError,
      );
    } finally {
      await provider.start();
    }
  });
});

describe("GET /v1/charges", () => {
  it("pages oldest first by a cursor, and filters by creation time", async () => {
    const since = Math.floor(Date.now() / 1000);
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await provider.client.charge(request()));
    const seen: ListedCharge[] = [];
    let startingAfter: string | undefined;
    for (;;) {
      const page = await provider.client.listCharges({
        createdGte: since,
        startingAfter,
        limit: 2,
      });
      seen.push(...page.data);
      if (!page.hasMore) break;
      startingAfter = page.data.at(-1)!.id;
    }
    expect(seen.map((c) => c.id).slice(-5)).toEqual(made.map((c) => c.id));
    expect(new Set(seen.map((c) => c.id)).size).toBe(seen.length);
    expect(seen.every((c) => c.created >= since)).toBe(true);
    expect((await provider.client.listCharges({ createdLt: since - 3600 })).data).toEqual([]);
  });

  it("refuses a cursor that names no charge", async () => {
    await expect(provider.client.listCharges({ startingAfter: "ch_nope" })).rejects.toBeInstanceOf(
      ProviderRefusedError,
    );
  });
});

describe("the caller's secret key", () => {
  const rival = () => createProviderClient(provider.url, RIVAL_SHOP.secretKey);
  const raw = (path: string, init: RequestInit = {}) => fetch(new URL(path, provider.url), init);
  const chargeBody = (reference: string) =>
    JSON.stringify({ reference, amountCents: 1, currency: "EUR" });

  it("without a key, or with a key no shop has, nothing is charged or listed: 401 with a JSON error", async () => {
    const reference = randomUUID();
    for (const authorization of [
      undefined,
      "Bearer sk_nobody_0123456789abcdef0123456789",
      "Basic x",
      "Bearer ",
    ]) {
      const headers: Record<string, string> = {
        "content-type": "application/json",
        "idempotency-key": `k-${reference}`,
      };
      if (authorization !== undefined) headers.authorization = authorization;
      const posted = await raw("/v1/charges", {
        method: "POST",
        headers,
        body: chargeBody(reference),
      });
      expect(posted.status).toBe(401);
      expect(posted.headers.get("www-authenticate")).toMatch(/^Bearer/);
      expect(await posted.json()).toEqual({
        error: { type: "authentication_error", message: expect.any(String) },
      });
      const listed = await raw("/v1/charges?limit=100", {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(listed.status).toBe(401);
      expect(JSON.stringify(await listed.json())).not.toContain('"data"');
    }
    expect(await provider.charges(reference)).toEqual([]);
    // The shop's client with a wrong key is refused the same way, as a refusal (not retried).
    const wrong = createProviderClient(provider.url, "sk_wrong_key_0123456789abcdef0123456789");
    await expect(wrong.charge(request({ reference }))).rejects.toMatchObject({
      status: 401,
      type: "authentication_error",
    });
    await expect(wrong.listCharges({})).rejects.toBeInstanceOf(ProviderRefusedError);
    expect(await provider.charges(reference)).toEqual([]);
  });

  it("keys are the shop's own: another shop's same idempotency key is another charge, and neither shop lists the other's", async () => {
    const key = `shared-${randomUUID()}`;
    const theirs = await rival().charge(request({ idempotencyKey: key, amountCents: 1 }));
    const ours = await provider.client.charge(request({ idempotencyKey: key, amountCents: 1_900 }));
    expect(ours).toMatchObject({ replayed: false, amountCents: 1_900 });
    expect(ours.id).not.toBe(theirs.id);
    const [row] = await provider.sql<{ shop: string }>(
      `SELECT shop_id AS shop FROM charges WHERE id = $1`,
      [theirs.id],
    );
    expect(row!.shop).toBe(RIVAL_SHOP.id);

    const byKey = await provider.client.listCharges({ idempotencyKey: key });
    expect(byKey.data.map((c) => c.id)).toEqual([ours.id]);
    const all = await provider.client.listCharges({ limit: 100, createdGte: 0 });
    expect(all.data.map((c) => c.id)).not.toContain(theirs.id);
    expect((await rival().listCharges({ idempotencyKey: key })).data.map((c) => c.id)).toEqual([
      theirs.id,
    ]);
    // Another shop's charge id is no position in this shop's list.
    await expect(provider.client.listCharges({ startingAfter: theirs.id })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("a bad shop configuration stops the provider at start with a sentence saying what is wrong", async () => {
    expect(parseShops(undefined)).toMatchObject({
      ok: false,
      message: /PROVIDER_SHOPS is not set/,
    });
    expect(parseShops("[{")).toMatchObject({ ok: false, message: /not JSON/ });
    expect(parseShops("[]")).toMatchObject({ ok: false, message: /names no shop/ });
    const key = "sk_test_0123456789abcdef0123456789abcdef";
    expect(
      parseShops(
        JSON.stringify([
          { id: "a", secretKey: key },
          { id: "b", secretKey: key },
        ]),
      ),
    ).toMatchObject({ ok: false, message: /two shops have one secretKey/ });
    expect(parseShops(JSON.stringify([{ id: "a", secretKey: "short" }]))).toMatchObject({
      ok: false,
      message: /at least 32 characters/,
    });
    const lines: string[] = [];
    await expect(
      startProviderService({
        databaseUrl: provider.databaseUrl,
        secretKey: "too short",
        log: (line) => lines.push(line),
      }),
    ).rejects.toThrow(/exited/);
    expect(lines.join("\n")).toMatch(/cannot start: PROVIDER_SHOPS: .*at least 32 characters/s);
  });
});

describe("webhooks", () => {
  it("posts each charge's event to the merchant, signed with the shared secret, until it answers 2xx", async () => {
    const secret = "provider-test-secret-0123456789abcdef";
    const received: { id: string; type: string; data: { chargeId: string } }[] = [];
    let refuseFirst = true;
    const merchant = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        const signed = verifySignature(req.headers[SIGNATURE_HEADER] as string, raw, secret, {
          nowSeconds: Date.now() / 1000,
        });
        if (!signed.ok || refuseFirst) {
          refuseFirst = false;
          res.writeHead(signed.ok ? 503 : 400).end();
          return;
        }
        received.push(JSON.parse(raw.toString()));
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => merchant.listen(0, "127.0.0.1", resolve));
    try {
      const port = (merchant.address() as { port: number }).port;
      const sender = await provider.withFaults({
        webhook: { url: `http://127.0.0.1:${port}/hook`, secret },
        duplicateRate: 0,
      });
      const charge = await sender.client.charge(request());
      // Refused once (503), retried after its backoff, then taken: delivered, once.
      await waitFor(
        "the event delivered",
        async () => (await provider.events(charge.id))[0]?.deliveredAt,
        30_000,
      );
      expect(received.filter((e) => e.data.chargeId === charge.id)).toEqual([
        expect.objectContaining({ type: "charge.succeeded" }),
      ]);
    } finally {
      merchant.close();
    }
  });

  it("survives its database dropping the connection in the middle of a delivery, and delivers afterwards", async () => {
    // The sender holds a pooled connection in a transaction while it posts; PostgreSQL going away
    // then (a restart, a failover) must fail that round, not kill the process with an `error`
    // event nobody listens to.
    let hold: ((res: http.ServerResponse) => void) | undefined;
    const held = new Promise<http.ServerResponse>((resolve) => (hold = resolve));
    const merchant = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        // The first delivery waits for the test; every later one is taken at once.
        if (hold) {
          hold(res);
          hold = undefined;
        } else res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => merchant.listen(0, "127.0.0.1", resolve));
    try {
      const port = (merchant.address() as { port: number }).port;
      const sender = await provider.withFaults({
        webhook: {
          url: `http://127.0.0.1:${port}/hook`,
          secret: "provider-test-secret-0123456789",
        },
        duplicateRate: 0,
      });
      const first = await sender.client.charge(request());
      const response = await held; // the event is on its way; the round's transaction is open
      const [terminated] = await provider.sql<{ count: number }>(
        `SELECT count(pg_terminate_backend(pid))::int AS count FROM pg_stat_activity
         WHERE datname = current_database() AND state = 'idle in transaction'`,
      );
      expect(terminated!.count).toBe(1);
      response.writeHead(200).end();

      // Still serving: a new charge is made, and the first event is delivered again and recorded.
      const second = await sender.client.charge(request());
      for (const charge of [first, second])
        await waitFor(
          `the event of ${charge.id} delivered`,
          async () => (await provider.events(charge.id))[0]?.deliveredAt,
          30_000,
        );
    } finally {
      merchant.close();
    }
  });
});
