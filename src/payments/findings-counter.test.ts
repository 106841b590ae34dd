// once_reconciliation_findings_total{kind}: every finding found, counted once when it is recorded
// and once more each time it is opened again after being resolved; a run that finds it again while
// it is still open counts nothing. Read as Prometheus scrapes it.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { adminCalls, TOKENS } from "../test/http";
import { testApp } from "../test/app";
import { handleMetricsRequest } from "../server/metrics";
import { createReconciliation, FindingKind } from "./reconciliation";

const t = useTestDatabase();
const provider = useTestProvider();
const admin = adminCalls(() => t.db);

async function scrape(): Promise<string> {
  const res = await handleMetricsRequest(
    testApp(t.db),
    new Request("http://localhost/api/metrics", {
      headers: { authorization: `Bearer ${TOKENS.admin}` },
    }),
  );
  return res.text();
}

/** The counter of one kind, as scraped. */
async function found(kind: string): Promise<number> {
  const match = new RegExp(
    `^once_reconciliation_findings_total\\{kind="${kind}"\\} (\\d+)$`,
    "m",
  ).exec(await scrape());
  if (!match) throw new Error(`no findings counter for ${kind}`);
  return Number(match[1]);
}

const reconcile = () => createReconciliation(t.db, provider.client, { settleSeconds: 0 });

describe("once_reconciliation_findings_total", () => {
  it("is a counter with every kind, 0 when none was found", async () => {
    const body = await scrape();
    expect(body).toMatch(/^# TYPE once_reconciliation_findings_total counter$/m);
    for (const kind of Object.values(FindingKind))
      expect(body).toMatch(
        new RegExp(`^once_reconciliation_findings_total\\{kind="${kind}"\\} \\d+$`, "m"),
      );
  });

  it("counts a finding when recorded and when opened again, never while it stays open", async () => {
    const before = await found("CHARGE_WITHOUT_ORDER");
    const chargeId = `ch_lost${randomUUID().replaceAll("-", "")}`;
    await provider.sql(
      `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
       VALUES ($1, $1, $2, 700, 'EUR', 'SUCCEEDED', now() - interval '1 minute')`,
      [chargeId, randomUUID()],
    );
    expect((await reconcile().runOnce()).recorded).toBeGreaterThanOrEqual(1);
    expect(await found("CHARGE_WITHOUT_ORDER")).toBe(before + 1);

    // Found again while open: nothing new.
    await reconcile().runSince();
    expect(await found("CHARGE_WITHOUT_ORDER")).toBe(before + 1);

    // Resolved: the counter does not go down (the open gauge does).
    const finding = await t.db.reconciliationFinding.findFirstOrThrow({
      where: { chargeIds: { has: chargeId } },
    });
    const resolved = await admin.mutate("admin.reconciliation.resolve", {
      id: finding.id,
      note: "refunded at the provider",
    });
    expect(resolved.status).toBe(200);
    expect(await found("CHARGE_WITHOUT_ORDER")).toBe(before + 1);

    // The disagreement is still there: opened again, counted again.
    expect((await reconcile().runSince()).reopened).toBe(1);
    expect(await found("CHARGE_WITHOUT_ORDER")).toBe(before + 2);
    expect(
      await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: finding.id } }),
    ).toMatchObject({ timesFound: 2, resolvedAt: null });
  });
});
