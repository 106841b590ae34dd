// GET /api/metrics: who may scrape, and what a scrape says.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { callTrpc, TOKENS } from "@/test/http";
import { engineFor, testApp } from "@/test/app";
import { handleMetricsRequest } from "./metrics";
import { insertKey, insertOutbox } from "../test/admin-factory";
import { SESSION_COOKIE } from "./auth/session";
import { sessionCookieFor } from "@/test/sessions";

const t = useTestDatabase();

const scrape = (authorization?: string, extra: Record<string, string> = {}) =>
  handleMetricsRequest(
    testApp(t.db),
    new Request("http://localhost/api/metrics", {
      headers: { ...(authorization ? { authorization } : {}), ...extra },
    }),
  );

describe("GET /api/metrics auth", () => {
  const sessionOf = async (email: string) => {
    const user = await t.db.user.findUniqueOrThrow({ where: { email } });
    return sessionCookieFor(t.db, user.id);
  };

  it("is 401 without a token, with a bad token, and with a forged or unsigned session cookie", async () => {
    expect((await scrape()).status).toBe(401);
    expect((await scrape("Bearer not_a_token")).status).toBe(401);
    expect((await scrape("Basic YWRtaW46YWRtaW4=")).status).toBe(401);
    expect((await scrape(undefined, { cookie: `${SESSION_COOKIE}=whatever` })).status).toBe(401);
    // The operator's user id with a made-up signature: the cookie is checked, not trusted.
    const admin = await t.db.user.findUniqueOrThrow({ where: { email: "admin@example.com" } });
    const forged = `${SESSION_COOKIE}=${admin.id}.${Math.floor(Date.now() / 1000) + 3600}.${"A".repeat(43)}`;
    expect((await scrape(undefined, { cookie: forged })).status).toBe(401);
    expect((await scrape()).headers.get("www-authenticate")).toMatch(/^Bearer/);
  });

  it("is 200 with the operator's session cookie (the dashboard's browser), 403 with a tenant's", async () => {
    const operator = await scrape(undefined, { cookie: await sessionOf("admin@example.com") });
    expect(operator.status).toBe(200);
    expect(await operator.text()).toContain("# TYPE once_idempotency_events_total counter");
    const tenant = await scrape(undefined, { cookie: await sessionOf("acme@example.com") });
    expect(tenant.status).toBe(403);
    expect(await tenant.text()).not.toMatch(/once_/);
  });

  it("is 403 for a tenant token", async () => {
    const res = await scrape(`Bearer ${TOKENS.acme}`);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toMatch(/once_/);
  });
});

describe("GET /api/metrics content", () => {
  it("serves the cluster-wide counters and the live gauges in Prometheus text", async () => {
    const { counters, run } = engineFor(t.db);
    counters.increment("acme", "checkout.placeOrder", "executed", 5);
    counters.increment("acme", "checkout.placeOrder", "replayed", 2);
    await counters.flush(run);
    // Another instance's flush: the table is what counts, not this process's memory.
    await t.db.idempotencyCounter.create({
      data: { scope: "globex", procedure: "checkout.placeOrder", event: "store_errors", count: 7n },
    });
    await insertKey(t.db, { status: "PROCESSING", leaseSeconds: -30 });
    await insertKey(t.db, { status: "COMPLETED" });
    // A key 2 minutes past its retention that no reaper has deleted: the reaper's lag.
    await t.db
      .$executeRaw`INSERT INTO "IdempotencyKey" ("scope", "key", "procedure", "fingerprint", "status", "expiresAt")
      VALUES ('acme', ${randomUUID()}, 'checkout.placeOrder', ${"f".repeat(64)}, 'COMPLETED', now() - interval '120 seconds')`;
    await insertOutbox(t.db, { status: "DEAD" });
    const stuck = await insertKey(t.db, { status: "PROCESSING", leaseSeconds: -30 });
    expect(
      (
        await callTrpc(t.db, {
          path: "admin.keys.bust",
          input: { id: stuck.id, reason: "metrics test" },
          token: TOKENS.admin,
          key: randomUUID(),
          method: "POST",
        })
      ).status,
    ).toBe(200);

    const res = await scrape(`Bearer ${TOKENS.admin}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const body = await res.text();
    expect(body).toContain("# TYPE once_idempotency_events_total counter");
    expect(body).toContain(
      'once_idempotency_events_total{tenant="acme",procedure="checkout.placeOrder",event="executed"} 5',
    );
    expect(body).toContain(
      'once_idempotency_events_total{tenant="acme",procedure="checkout.placeOrder",event="replayed"} 2',
    );
    expect(body).toContain(
      'once_idempotency_events_total{tenant="globex",procedure="checkout.placeOrder",event="store_errors"} 7',
    );
    // The bust's own count was still in memory: a scrape flushes this instance first.
    expect(body).toContain(
      'once_idempotency_events_total{tenant="acme",procedure="checkout.placeOrder",event="busted"} 1',
    );
    expect(body).toMatch(/^once_idempotency_keys\{status="PROCESSING"\} 1$/m);
    expect(body).toMatch(/^once_idempotency_keys\{status="COMPLETED"\} [2-9]\d*$/m);
    expect(body).toMatch(/^once_idempotency_stuck_leases 1$/m);
    expect(body).toMatch(/^once_idempotency_replay_cache_bytes \d+$/m);
    expect(body).toMatch(/^once_idempotency_replay_cache_entries \d+$/m);
    expect(body).toMatch(/^once_idempotency_reaper_lag_seconds 1[23]\d$/m);
    expect(body).toMatch(/^once_outbox_messages\{status="DEAD"\} 1$/m);
    for (const kind of ["DUPLICATE_CHARGE", "CHARGE_WITHOUT_ORDER", "AMOUNT_MISMATCH"])
      expect(body).toMatch(
        new RegExp(`^once_reconciliation_open_findings\\{kind="${kind}"\\} 0$`, "m"),
      );

    // A second scrape reads afresh (counters are not added twice).
    const again = await (await scrape(`Bearer ${TOKENS.admin}`)).text();
    expect(again).toContain('event="executed"} 5');
  });
});
