// `npm run reconcile`: one reconciliation run against DATABASE_URL (or the running embedded database); prints what does not add up.
// Findings already recorded by an earlier run are listed again but not recorded twice.
import { loadDatabaseConfig } from "../src/server/config";
import { createDb } from "../src/server/db/client";
import { runReconciliation } from "../src/server/payments";
import { configOrExit } from "./lib/config";
import { requireDatabase, runTool } from "./lib/database";

// Only the database's variables (DATABASE_URL, or the running app's embedded database).
configOrExit("reconcile", () => loadDatabaseConfig(process.env));
const db = createDb(await requireDatabase());
await runTool(async () => {
  try {
    const { findings, recorded, closedDeadLetters } = await runReconciliation(db);
    if (findings.length === 0) console.log("reconciliation: the provider's charges and the orders agree");
    for (const f of findings) {
      console.log(`${f.kind}\torder=${f.orderId ?? "-"}\tcharges=${f.chargeIds.join(",") || "-"}\t${JSON.stringify(f.details)}`);
    }
    if (closedDeadLetters > 0) console.log(`reconciliation: closed ${closedDeadLetters} dead-lettered payment(s) whose order was paid after all`);
    console.log(`reconciliation: ${findings.length} finding(s), ${recorded} new`);
  } finally {
    await db.$disconnect();
  }
});
