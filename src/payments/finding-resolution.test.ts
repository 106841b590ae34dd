// A finding carried to its end: resolved with a note on the dashboard (admin.reconciliation.resolve)
// or by `npm run reconcile -- resolve`, it leaves the open gauge and is audited; found again by
// the job, it is open again.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { reconcileCommand as runReconcile } from "../test/reconcile-command";
import { useTestDatabase } from "../test/database";
import { useTestProvider } from "../test/provider";
import { adminCalls, TOKENS } from "../test/http";
import { testApp } from "../test/app";
import { handleMetricsRequest } from "../server/metrics";
import { createReconciliation } from "./reconciliation";

const t = useTestDatabase();
const provider = useTestProvider();
const admin = adminCalls(() => t.db);

/** The open-findings gauge of one kind, as Prometheus scrapes it. */
async function openGauge(kind: string): Promise<number> {
  const res = await handleMetricsRequest(
    testApp(t.db),
    new Request("http://localhost/api/metrics", {
      headers: { authorization: `Bearer ${TOKENS.admin}` },
    }),
  );
  const match = new RegExp(
    `^once_reconciliation_open_findings\\{kind="${kind}"\\} (\\d+)$`,
    "m",
  ).exec(await res.text());
  if (!match) throw new Error(`no open-findings gauge for ${kind}`);
  return Number(match[1]);
}

/** A charge for an order the shop does not have: a CHARGE_WITHOUT_ORDER finding, recorded. */
async function lostCharge() {
  const id = `ch_lost${randomUUID().replaceAll("-", "")}`;
  await provider.sql(
    `INSERT INTO charges (id, idempotency_key, reference, amount_cents, currency, status, created_at)
     VALUES ($1, $1, $2, 700, 'EUR', 'SUCCEEDED', now() - interval '1 minute')`,
    [id, randomUUID()],
  );
  await createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runOnce();
  return t.db.reconciliationFinding.findFirstOrThrow({ where: { chargeIds: { has: id } } });
}

const reconcileCommand = (...args: string[]) =>
  runReconcile({ databaseUrl: t.url, providerUrl: provider.url }, ...args);

describe("a finding's life", () => {
  it("resolved on the dashboard: gone from the open gauge, audited; found again: open again", async () => {
    const finding = await lostCharge();
    const before = await openGauge("CHARGE_WITHOUT_ORDER");
    expect(before).toBeGreaterThanOrEqual(1);

    const res = await admin.mutate("admin.reconciliation.resolve", {
      id: finding.id,
      note: "refunded at the provider",
    });
    expect(res.status).toBe(200);
    expect(res.json.result.data).toMatchObject({
      status: "resolved",
      resolvedBy: "admin@example.com",
    });
    expect(await openGauge("CHARGE_WITHOUT_ORDER")).toBe(before - 1);
    const open = await admin.query("admin.reconciliation.list", { open: true });
    expect(open.items.map((f: { id: string }) => f.id)).not.toContain(finding.id);
    expect(
      await t.db.auditEntry.findMany({
        where: { targetType: "ReconciliationFinding", targetId: finding.id },
      }),
    ).toMatchObject([
      {
        action: "reconciliation.resolve",
        actor: "admin@example.com",
        reason: "refunded at the provider",
      },
    ]);
    // Resolving it again changes nothing and audits nothing more.
    const again = await admin.mutate("admin.reconciliation.resolve", {
      id: finding.id,
      note: "twice",
    });
    expect(again.json.result.data).toMatchObject({ status: "already-resolved", auditId: null });
    expect(await t.db.auditEntry.count({ where: { targetId: finding.id } })).toBe(1);
    // An unknown finding is a 404.
    expect(
      (await admin.mutate("admin.reconciliation.resolve", { id: randomUUID(), note: "no such" }))
        .status,
    ).toBe(404);

    // The charge is still there: the next run that judges it opens the finding again.
    const run = await createReconciliation(t.db, provider.client, { settleSeconds: 0 }).runSince();
    expect(run.reopened).toBe(1);
    expect(
      await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: finding.id } }),
    ).toMatchObject({
      resolvedAt: null,
      resolution: null,
    });
    expect(await openGauge("CHARGE_WITHOUT_ORDER")).toBe(before);
  });

  it(
    "resolved by npm run reconcile -- resolve <id> --note: audited with the command's user",
    { timeout: 30_000 },
    async () => {
      const finding = await lostCharge();
      const { stdout } = await reconcileCommand(
        "resolve",
        finding.id,
        "--note",
        "order restored from backup",
      );
      expect(stdout).toMatch(new RegExp(`finding ${finding.id} resolved \\(audit entry `));
      expect(
        await t.db.reconciliationFinding.findUniqueOrThrow({ where: { id: finding.id } }),
      ).toMatchObject({
        resolution: "order restored from backup",
        resolvedAt: expect.any(Date),
      });
      expect(
        await t.db.auditEntry.findFirstOrThrow({ where: { targetId: finding.id } }),
      ).toMatchObject({
        action: "reconciliation.resolve",
        actor: expect.stringMatching(/\(npm run reconcile\)$/),
      });

      const missingNote = await reconcileCommand("resolve", finding.id).then(
        () => null,
        (error: { code: number; stderr: string }) => error,
      );
      expect(missingNote).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/^reconcile: resolve needs --note/),
      });
    },
  );
});
