// The checker is tested like the code it judges: fabricated database states, each with one kind
// of violation, must make it fail (and name the offender); the clean state must pass. A green soak
// then means the promises held, not that the checker looked away.
import { readFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, beforeEach, afterEach, describe, expect, it } from "vitest";
import { createTestDatabase } from "../../src/test/database";
import { evaluate, passed, type CheckRow, type RunFigures } from "./checker";
import { parseSoakArgs } from "./config";
import { readFacts } from "./facts";
import { renderReport } from "./report";
import { Profile, type SoakConfig } from "./soak-config";
import { judgeProfile, judgeRun, VerdictKind } from "./verdict";
import type { Fault, Intent, RequestSample } from "./record";

let drop: () => Promise<void>;
let url: string;
let client: pg.Client;
let userId: string;
let productId: string;
let stockBefore: number;

const PROVIDER_SCHEMA = readFileSync(
  path.join(import.meta.dirname, "../../services/provider/schema.sql"),
  "utf8",
);

beforeAll(async () => {
  const t = await createTestDatabase({ poolMax: 1 });
  drop = t.drop;
  url = t.url;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  userId = (
    await c.query<{ id: string }>(
      `SELECT "id"::text AS id FROM "User" WHERE "email" = 'acme@example.com'`,
    )
  ).rows[0]!.id;
  const p = (
    await c.query<{ id: string; stock: number }>(
      `SELECT "id"::text AS id, "stock" FROM "Product" WHERE "sku" = 'MUG-001'`,
    )
  ).rows[0]!;
  productId = p.id;
  stockBefore = p.stock;
  // The provider's books (services/provider/schema.sql) beside the shop's tables: readFacts reads
  // them from whichever database it is given.
  await c.query(PROVIDER_SCHEMA);
  await c.end();
});
afterAll(async () => drop());

// Every case fabricates its state inside a transaction that is rolled back afterwards.
beforeEach(async () => {
  client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query("BEGIN");
});
afterEach(async () => {
  await client.query("ROLLBACK");
  await client.end();
});

const intent = (key: string, over: Partial<Intent> = {}): Intent => ({
  id: 0,
  tenant: "acme",
  key,
  items: [{ productId, quantity: 2 }],
  slow: false,
  startedAt: 0,
  endedAt: 10,
  final: 200,
  orderIds: [],
  statuses: [200],
  attempts: 1,
  resent: false,
  ...over,
});

/**
 * One paid order for `key`, as a correct run leaves it: order, line, stock taken, outbox delivered,
 * one charge.
 */
async function paidOrder(
  key: string,
  options: { charges?: number; outbox?: "DELIVERED" | "PENDING" } = {},
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO "Order" ("tenantId", "userId", "status", "totalCents", "currency", "idempotencyKey")
     VALUES ('acme', $1::uuid, 'PAID', 2900, 'EUR', $2) RETURNING "id"::text AS id`,
    [userId, key],
  );
  const orderId = rows[0]!.id;
  await client.query(
    `INSERT INTO "OrderItem" ("orderId", "productId", "sku", "name", "unitPriceCents", "quantity", "lineTotalCents")
     VALUES ($1::uuid, $2::uuid, 'MUG-001', 'Enamel mug', 1450, 2, 2900)`,
    [orderId, productId],
  );
  await client.query(`UPDATE "Product" SET "stock" = "stock" - 2 WHERE "id" = $1::uuid`, [
    productId,
  ]);
  await client.query(
    `INSERT INTO "OutboxMessage" ("topic", "aggregateId", "idempotencyKey", "payload", "status")
     VALUES ('payment.charge', $1, $2, '{}'::jsonb, $3::"OutboxStatus")`,
    [orderId, `acme:${orderId}:${key}`, options.outbox ?? "DELIVERED"],
  );
  for (let i = 0; i < (options.charges ?? 1); i++) {
    await client.query(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status)
       VALUES ($1, $2, $3, 2900, 'EUR', 'SUCCEEDED')`,
      [`ch_${orderId}_${i}`, `any-format-${orderId}-${i}`, orderId],
    );
  }
  return orderId;
}

async function verdict(
  intents: Intent[],
  requests: RequestSample[] = [{ t: 0, ms: 5, seen: 200 }],
  faults: Fault[] = [],
): Promise<CheckRow[]> {
  const facts = await readFacts(client, 10);
  const run: RunFigures = {
    intents,
    requests,
    initialStock: new Map([[productId, stockBefore]]),
    fireEndsAt: 60_000,
    faults,
  };
  return evaluate(facts, run);
}

/**
 * The run fails on `label` (and on the rows in `alsoFailing`, which the same fabricated state
 * breaks too), and on nothing else.
 */
/** The verdict on a run of one intent, k1, that placed the one order `id`. */
const verdictOn = (id: string) => verdict([intent("k1", { orderIds: [id] })]);

function failedRow(rows: CheckRow[], label: string, alsoFailing: string[] = []): CheckRow {
  expect(passed(rows)).toBe(false);
  const bad = rows.filter((r) => r.ok === false);
  expect(bad.map((r) => r.label).sort()).toEqual([label, ...alsoFailing].sort());
  return bad.find((r) => r.label === label)!;
}

const LOST = "acknowledged orders lost (answered 200, then gone)";
const CHARGED_TWICE = "duplicate charges (an intent charged more than once)";

describe("the soak's checker: orders and answers", () => {
  it("passes a correct run: one order, one charge, stock taken once, outbox delivered", async () => {
    const id = await paidOrder("k1");
    const rows = await verdict([
      intent("k1", { orderIds: [id, id] }),
      intent("k2", { final: 412, statuses: [412], orderIds: [] }),
    ]);
    expect(rows.filter((r) => r.ok === false)).toEqual([]);
    expect(passed(rows)).toBe(true);
  });

  it("fails when an answered intent has two orders", async () => {
    const id = await paidOrder("k1");
    await paidOrder("k1");
    const row = failedRow(await verdictOn(id), "orders per intent", [CHARGED_TWICE]);
    expect(row.offenders[0]).toContain("acme/k1: 2 orders");
  });

  it("fails when an answered intent has no order, and when an order belongs to no intent", async () => {
    await paidOrder("stray");
    const row = failedRow(
      await verdict([intent("k1", { orderIds: ["00000000-0000-0000-0000-000000000000"] })]).then(
        (rows) => rows.filter((r) => r.label !== "the same order id in every answer of an intent"),
      ),
      "orders per intent",
      [LOST],
    );
    expect(row.offenders.join("\n")).toMatch(/acme\/k1: 0 orders[\s\S]*acme\/stray: 1 order/);
  });

  it("fails when two answers of one intent name different orders", async () => {
    const id = await paidOrder("k1");
    const row = failedRow(
      await verdict([intent("k1", { orderIds: [id, "11111111-1111-1111-1111-111111111111"] })]),
      "the same order id in every answer of an intent",
      [LOST],
    );
    expect(row.offenders[0]).toContain("acme/k1");
  });

  it("fails when a paid order was charged twice, or not at all", async () => {
    const twice = await paidOrder("k1", { charges: 2 });
    const never = await paidOrder("k2", { charges: 0 });
    const row = failedRow(
      await verdict([intent("k1", { orderIds: [twice] }), intent("k2", { orderIds: [never] })]),
      "charges per paid order",
      [CHARGED_TWICE],
    );
    expect(row.offenders.join("\n")).toMatch(/k1, PAID\): 2 charges[\s\S]*k2, PAID\): 0 charges/);
  });
});

describe("the soak's checker: orders lost, and the charges in the provider's books", () => {
  it("fails when an order id answered 200 is no longer in the database (a failover lost it)", async () => {
    const kept = await paidOrder("k1");
    const lost = "22222222-2222-2222-2222-222222222222";
    // The lost order's intent has no order at all now, which "orders per intent" and "the same
    // order id" see too.
    const row = failedRow(
      await verdict([intent("k1", { orderIds: [kept] }), intent("k2", { orderIds: [lost] })]),
      LOST,
      ["orders per intent", "the same order id in every answer of an intent"],
    );
    expect(row.offenders).toEqual([
      `acme/k2: answered 200 with order ${lost}, which the database no longer has`,
    ]);
  });

  it("fails on a charge in the provider's books whose order does not exist", async () => {
    const id = await paidOrder("k1");
    await client.query(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status)
       VALUES ('ch_orphan', 'any-key', '33333333-3333-3333-3333-333333333333', 2900, 'EUR', 'SUCCEEDED')`,
    );
    const row = failedRow(
      await verdictOn(id),
      "charges without their order (the provider's books)",
      ["charges without their order, found by reconciliation"],
    );
    expect(row.offenders).toEqual(["charge ch_orphan: no such order"]);
  });

  it("reads the charges from the provider's own books when they are in another database", async () => {
    const id = await paidOrder("k1", { charges: 0 });
    const books = await createTestDatabase({ poolMax: 1 });
    const booksClient = new pg.Client({ connectionString: books.url });
    await booksClient.connect();
    try {
      await booksClient.query(PROVIDER_SCHEMA);
      await booksClient.query(
        `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status)
         VALUES ('ch_elsewhere', 'any-key', $1, 2900, 'EUR', 'SUCCEEDED')`,
        [id],
      );
      const facts = await readFacts(client, 10, booksClient);
      expect(facts.orders.find((o) => o.id === id)?.charges).toBe(1);
      expect(facts.charges).toEqual([{ id: "ch_elsewhere", reference: id }]);
      // The same order judged by other (empty) books has no charge: the books decide.
      expect((await readFacts(client, 10)).orders.find((o) => o.id === id)?.charges).toBe(0);
    } finally {
      await booksClient.end();
      await books.drop();
    }
  });
});

describe("the soak's checker: a second charge, the stock, stuck keys and the outbox", () => {
  it("fails when one intent was charged twice through two orders (its first order lost, placed again)", async () => {
    const second = await paidOrder("k1");
    const lost = "44444444-4444-4444-4444-444444444444";
    await client.query(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status)
       VALUES ('ch_lost_order', 'any-key-2', $1, 2900, 'EUR', 'SUCCEEDED')`,
      [lost],
    );
    const rows = await verdict([intent("k1", { orderIds: [lost, second] })]);
    // The answers named two orders, one of them gone, and its charge has no order: three rows see
    // it.
    const row = failedRow(rows, CHARGED_TWICE, [
      LOST,
      "the same order id in every answer of an intent",
      "charges without their order (the provider's books)",
      "charges without their order, found by reconciliation",
    ]);
    expect(row.offenders[0]).toMatch(/^acme\/k1: 2 charges/);
  });

  it("fails when the stock does not add up", async () => {
    const id = await paidOrder("k1");
    await client.query(`UPDATE "Product" SET "stock" = "stock" - 1 WHERE "id" = $1::uuid`, [
      productId,
    ]);
    failedRow(await verdictOn(id), "stock arithmetic (before − sold = now, never < 0)");
  });

  it("fails on a key PROCESSING long past its lease", async () => {
    const id = await paidOrder("k1");
    await client.query(
      `INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "leaseToken", "leaseExpiresAt", "expiresAt")
       VALUES ('acme', 'stuck', 'checkout.placeOrder', repeat('a', 64), 'PROCESSING', gen_random_uuid(), now() - interval '1 minute', now() + interval '1 day')`,
    );
    const row = failedRow(await verdictOn(id), "keys PROCESSING past the sweeper's window");
    expect(row.offenders).toEqual(["acme/stuck"]);
  });

  it("fails on an outbox row still pending after the drain", async () => {
    const id = await paidOrder("k1", { outbox: "PENDING" });
    failedRow(await verdictOn(id), "outbox rows neither delivered nor dead-lettered with a reason");
  });
});

describe("the soak's checker: reconciliation's findings", () => {
  it("fails on an open reconciliation finding", async () => {
    const id = await paidOrder("k1");
    await client.query(
      `INSERT INTO "ReconciliationFinding" ("kind", "dedupeKey", "orderId", "chargeIds", "details")
       VALUES ('DUPLICATE_CHARGE', 'x', $1, ARRAY['ch_a', 'ch_b'], '{}'::jsonb)`,
      [id],
    );
    failedRow(await verdictOn(id), "reconciliation findings besides lost orders");
  });

  it("a lost order's charge that reconciliation found fails only the loss itself", async () => {
    const id = await paidOrder("k1");
    await client.query(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status)
       VALUES ('ch_of_lost', 'lost-key', '55555555-5555-5555-5555-555555555555', 2900, 'EUR', 'SUCCEEDED')`,
    );
    await client.query(
      `INSERT INTO "ReconciliationFinding" ("kind", "dedupeKey", "orderId", "chargeIds", "details")
       VALUES ('CHARGE_WITHOUT_ORDER', 'CHARGE_WITHOUT_ORDER:ch_of_lost', NULL, ARRAY['ch_of_lost'], '{}'::jsonb)`,
    );
    const rows = await verdictOn(id);
    failedRow(rows, "charges without their order (the provider's books)");
    expect(
      rows.find((r) => r.label === "charges without their order, found by reconciliation"),
    ).toMatchObject({ ok: true, value: "1 of 1" });
  });
});

describe("the soak's checker: refusals", () => {
  it("fails when refusals outside the fault windows pass the bound, and names their reasons; refusals in a window are excused", async () => {
    const id = await paidOrder("k1");
    const answers = (from: number, seen: number, n: number, reason?: string): RequestSample[] =>
      Array.from({ length: n }, (_, i) => ({
        t: from + i * 10,
        ms: 5,
        seen,
        ...(reason ? { reason } : {}),
      }));
    const busy = [...answers(0, 200, 80), ...answers(30_000, 503, 20, "store_unavailable")];
    const row = failedRow(
      await verdict([intent("k1", { orderIds: [id] })], busy),
      "refusals (503) outside the fault windows",
    );
    expect(row.value).toBe("20 of 100 answers (20.0 %)");
    const shares = (await verdict([intent("k1", { orderIds: [id] })], busy)).find(
      (r) => r.label === "refusals (503) under fire",
    );
    expect(shares?.value).toBe("20 of 100 answers (20.0 %): store_unavailable ×20");
    // Too few answers to judge a share by: shown, not applied.
    const few = (await verdict([intent("k1", { orderIds: [id] })], busy.slice(50))).find(
      (r) => r.label === "refusals (503) outside the fault windows",
    );
    expect(few).toMatchObject({ ok: null, value: "20 of 50 answers (40.0 %): too few to judge" });
    // The same refusals right after an instance was killed are the fault's, not the machine's.
    const excused = await verdict([intent("k1", { orderIds: [id] })], busy, [
      { t: 29_000, kind: "kill", detail: "instance 1" },
    ]);
    expect(passed(excused)).toBe(true);
    // Refusals of requests sent before a fault and answered during it are the fault's too.
    const inFlight = busy.map((r) => (r.seen === 503 ? { ...r, t: r.t - 25_000, ms: 26_000 } : r));
    const sentBefore = await verdict([intent("k1", { orderIds: [id] })], inFlight, [
      { t: 29_000, kind: "kill", detail: "instance 1" },
    ]);
    expect(passed(sentBefore)).toBe(true);
    // ...and without the fault they count against the bound.
    failedRow(
      await verdict([intent("k1", { orderIds: [id] })], inFlight),
      "refusals (503) outside the fault windows",
    );
  });
});

describe("the soak's checker: locks, errors, and a run that answered nothing", () => {
  it("fails while a session still holds an advisory lock", async () => {
    const id = await paidOrder("k1");
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query("SELECT pg_advisory_lock(7020001)");
      failedRow(await verdictOn(id), "advisory locks left held");
    } finally {
      await holder.end();
    }
  });

  it("fails on any answer 500, and on any 422 for the same key and cart", async () => {
    const id = await paidOrder("k1");
    const five = failedRow(
      await verdict(
        [intent("k1", { orderIds: [id], statuses: [500, 200] })],
        [{ t: 0, ms: 5, seen: 500 }],
      ),
      "answers with status 500",
    );
    expect(five.offenders).toEqual(["acme/k1"]);
    failedRow(
      await verdict(
        [intent("k1", { orderIds: [id], statuses: [422, 200] })],
        [{ t: 0, ms: 5, seen: 422 }],
      ),
      "answers 422 (same key, same cart)",
    );
  });

  it("fails a run in which no intent was answered 200", async () => {
    failedRow(
      await verdict([
        intent("k1", { final: undefined, endedAt: undefined, statuses: [503], orderIds: [] }),
      ]),
      "intents answered 200",
    );
  });
});

/**
 * What a run says about one profile, everywhere it says it: the saved report's heading and closing
 * line, the console's last line and the exit code, all from the one verdict.
 */
function said(profile: Profile, rows: CheckRow[]) {
  const verdict = judgeProfile(profile, rows);
  const report = renderReport({
    profile,
    config: parseSoakArgs([]) as SoakConfig,
    rows,
    verdict,
    faults: [],
    startedAt: new Date("2026-11-23T23:19:44.761Z"),
    requests: 1,
  });
  const lines = report.trimEnd().split("\n");
  const run = judgeRun([verdict]);
  return {
    kind: verdict.kind,
    heading: lines[0]!,
    closingLine: lines.at(-1)!,
    console: run.closing,
    exitCode: run.exitCode,
    sentence: verdict.sentence,
  };
}

/** The report, the console and the exit code agree: all good, or all failed. */
function expectAgreement(s: ReturnType<typeof said>, good: boolean) {
  expect(s.exitCode).toBe(good ? 0 : 1);
  expect(s.heading.includes("**FAILED")).toBe(!good);
  expect(s.console.startsWith("FAILED")).toBe(!good);
  expect(s.closingLine).toBe(`**Verdict:** ${s.sentence}.`);
  expect(s.console).toContain(s.sentence);
  // "every promise held" only where every promise did.
  expect(s.closingLine.includes("every promise held")).toBe(s.kind === VerdictKind.PASSED);
  expect(s.console.includes("every promise held")).toBe(s.kind === VerdictKind.PASSED);
}

const LOST_ID = "66666666-6666-6666-6666-666666666666";
const lostCharge = () =>
  client.query(
    `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status) VALUES ('ch_shown', 'shown-key', $1, 2900, 'EUR', 'SUCCEEDED')`,
    [LOST_ID],
  );
const lostChargeFound = () =>
  client.query(
    `INSERT INTO "ReconciliationFinding" ("kind", "dedupeKey", "orderId", "chargeIds", "details")
     VALUES ('CHARGE_WITHOUT_ORDER', 'CHARGE_WITHOUT_ORDER:ch_shown', NULL, ARRAY['ch_shown'], '{}'::jsonb)`,
  );
/** A kept order (k1) and, with `lost`, an order answered 200 that the database no longer has. */
const rowsOf = async (kept: string, lost: boolean) =>
  verdict([
    intent("k1", { orderIds: [kept] }),
    ...(lost ? [intent("k2", { orderIds: [LOST_ID] })] : []),
  ]);

describe("the soak's verdict: one for the report, the console and the exit code", () => {
  it("pass: every promise held, exit 0", async () => {
    const s = said(Profile.DIRECT, await rowsOf(await paidOrder("k1"), false));
    expect(s).toMatchObject({ kind: VerdictKind.PASSED, sentence: "every promise held" });
    expect(s.heading).toMatch(/ — \*\*passed\*\*$/);
    expectAgreement(s, true);
  });

  it("fail: a violated check heads the report FAILED, names the check, exit 1", async () => {
    const s = said(Profile.DIRECT, await rowsOf(await paidOrder("k1", { charges: 2 }), false));
    expect(s.kind).toBe(VerdictKind.FAILED);
    expect(s.sentence).toContain("charges per paid order");
    expectAgreement(s, false);
  });

  it("fail: the same lost order in an ordinary profile is a failure, never a demonstration", async () => {
    const kept = await paidOrder("k1");
    await lostCharge();
    await lostChargeFound();
    const s = said(Profile.PATRONI, await rowsOf(kept, true));
    expect(s.kind).toBe(VerdictKind.FAILED);
    expectAgreement(s, false);
  });
});

describe("the soak's verdict: a demonstration that fails", () => {
  it("demonstration with nothing shown (no loss): fails, exit 1", async () => {
    const s = said(Profile.PATRONI_ASYNC, await rowsOf(await paidOrder("k1"), false));
    expect(s.kind).toBe(VerdictKind.DEMONSTRATED_NOTHING);
    expect(s.sentence).toMatch(
      /^the asynchronous profile showed no loss \(refusals under fire: .*\), so it demonstrated nothing/,
    );
    expect(s.heading).toMatch(/ — \*\*FAILED: demonstrated nothing\*\*$/);
    expectAgreement(s, false);
  });

  it("demonstration with losses but no charge to find (found 0 of 0): fails, exit 1", async () => {
    const s = said(Profile.PATRONI_ASYNC, await rowsOf(await paidOrder("k1"), true));
    expect(s.kind).toBe(VerdictKind.DEMONSTRATED_NOTHING);
    expect(s.sentence).toContain("none had been charged, so reconciliation had nothing to find");
    expectAgreement(s, false);
  });

  it("demonstration with loss not found: fails, exit 1", async () => {
    const kept = await paidOrder("k1");
    await lostCharge();
    const s = said(Profile.PATRONI_ASYNC, await rowsOf(kept, true));
    expect(s.kind).toBe(VerdictKind.LOSS_NOT_FOUND);
    expect(s.sentence).toContain("reconciliation found only 0 of their 1 charges");
    expectAgreement(s, false);
  });
});

describe("the soak's verdict: a demonstration that found its loss, and a whole run", () => {
  it("demonstration with loss found: demonstrated, exit 0, and never 'every promise held'", async () => {
    const kept = await paidOrder("k1");
    await lostCharge();
    await lostChargeFound();
    const s = said(Profile.PATRONI_ASYNC, await rowsOf(kept, true));
    expect(s.kind).toBe(VerdictKind.DEMONSTRATED);
    expect(s.sentence).toBe(
      "the asynchronous profile lost 1 acknowledged orders and reconciliation found their charges (1 of 1)",
    );
    expect(s.heading).toMatch(/ — \*\*demonstrated: loss shown and found\*\*$/);
    expectAgreement(s, true);
  });

  it("demonstration with loss found that also broke what a loss does not explain: fails, exit 1", async () => {
    const kept = await paidOrder("k1", { outbox: "PENDING" });
    await lostCharge();
    await lostChargeFound();
    const s = said(Profile.PATRONI_ASYNC, await rowsOf(kept, true));
    expect(s.kind).toBe(VerdictKind.FAILED);
    expect(s.sentence).toContain(
      "also broke what a loss does not explain: outbox rows neither delivered nor dead-lettered",
    );
    expectAgreement(s, false);
  });

  it("a run is good only when every profile is: one failed profile fails the run", () => {
    const good = judgeProfile(Profile.DIRECT, [
      { label: "x", value: "0", expected: "0", ok: true, offenders: [] },
    ]);
    const bad = judgeProfile(Profile.PGBOUNCER, [
      { label: "x", value: "1", expected: "0", ok: false, offenders: ["y"] },
    ]);
    expect(judgeRun([good, good])).toEqual({ exitCode: 0, closing: "every promise held" });
    expect(judgeRun([good, bad])).toMatchObject({
      exitCode: 1,
      closing: expect.stringMatching(/^FAILED: pgbouncer: /),
    });
    expect(judgeRun([])).toMatchObject({ exitCode: 1 });
  });
});
