// `npm run reconcile`: one reconciliation run against DATABASE_URL; prints what does not add up.
// Findings already recorded by an earlier run are listed again but not recorded twice.
import { createDb } from "../src/server/db/client";
import { runReconciliation } from "../src/server/payments";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is not set: point reconcile at the app's database");
  process.exit(2);
}
const db = createDb(url);
try {
  const { findings, recorded } = await runReconciliation(db);
  if (findings.length === 0) console.log("reconciliation: the provider's charges and the orders agree");
  for (const f of findings) {
    console.log(`${f.kind}\torder=${f.orderId ?? "-"}\tcharges=${f.chargeIds.join(",") || "-"}\t${JSON.stringify(f.details)}`);
  }
  console.log(`reconciliation: ${findings.length} finding(s), ${recorded} new`);
} finally {
  await db.$disconnect();
}
