// `npm run reconcile`: one reconciliation run against DATABASE_URL (or the running embedded
// database) and the provider's list API (PAYMENTS_PROVIDER_URL, or the provider the running app
// started); prints what does not add up in the window it judged. The server and `npm run worker`
// run the same job by themselves every RECONCILE_INTERVAL_MS; this is for an operator who wants it
// now. Findings already recorded by an earlier run are listed again but not recorded twice.
import { loadReconcileConfig } from "../src/server/config";
import { createDb } from "../src/server/db/client";
import { createProviderClient, createReconciliation } from "../src/server/payments";
import { resolveProviderUrl } from "../tools/db/url";
import { configOrExit } from "./lib/config";
import { requireDatabase, runTool } from "../tools/db/require-database";

// The database's variables and PAYMENTS_PROVIDER_URL: nothing the worker or the server needs.
const config = configOrExit("reconcile", () => loadReconcileConfig(process.env));
const providerUrl = resolveProviderUrl(config.providerUrl);
if (!providerUrl) {
  console.error(
    "No payment provider to reconcile with: start the app with `npm run dev`, or set PAYMENTS_PROVIDER_URL.",
  );
  process.exit(2);
}
const db = createDb(await requireDatabase());
await runTool(async () => {
  try {
    const { findings, recorded, closedDeadLetters, charges } = await createReconciliation(
      db,
      createProviderClient(providerUrl),
    ).runOnce();
    if (findings.length === 0)
      console.log(
        `reconciliation: the provider's ${charges} charge(s) in this window and the orders agree`,
      );
    for (const f of findings) {
      console.log(
        `${f.kind}\torder=${f.orderId ?? "-"}\tcharges=${f.chargeIds.join(",") || "-"}\t${JSON.stringify(f.details)}`,
      );
    }
    if (closedDeadLetters > 0)
      console.log(
        `reconciliation: closed ${closedDeadLetters} dead-lettered payment(s) whose order was paid after all`,
      );
    console.log(`reconciliation: ${findings.length} finding(s), ${recorded} new`);
  } finally {
    await db.$disconnect();
  }
});
