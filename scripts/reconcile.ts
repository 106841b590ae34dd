// `npm run reconcile`: reconciliation against DATABASE_URL (or the running embedded database) and
// the provider's list API (PAYMENTS_PROVIDER_URL, or the provider the running app started), called
// with the shop's secret key (PAYMENTS_PROVIDER_SECRET_KEY, or the key the running app started its
// provider with, or in demo mode the demo key). Each run reads the list under the job's budget
// (DEFAULT_RECONCILE_BUDGET); `--since` and `--all` go on run after run, each from where the last
// stopped, until the range is judged. The server and `npm run worker` run the job by themselves
// every minute; this is for an operator who wants it now:
//   npm run reconcile                      the job's run: recent changes and one slice of history
//   npm run reconcile -- --since <date>    every charge made and order changed since the date
//   npm run reconcile -- --all             the whole history
//   npm run reconcile -- resolve <id> --note "<what was done>"
// It judges up to the moment it starts (the job leaves the last 30 s to its next run), and says what
// it leaves for later: charges in flight (their order still PENDING, younger than 15 minutes).
// Findings already recorded are listed again but not recorded twice; one that had been resolved is
// opened again, and one whose disagreement is gone is closed.
import { loadReconcileConfig } from "../src/server/config";
import { createDb } from "../src/server/db/client";
import { logger } from "../src/server/logger";
import {
  createProviderClient,
  createReconciliation,
  type ReconciliationResult,
  budgetLine,
  PENDING_SETTLE_SECONDS,
  DEMO_PROVIDER_SECRET_KEY,
  resolveFinding,
} from "../src/payments";
import { resolveProviderSecretKey, resolveProviderUrl } from "../tools/db/url";
import { DEFAULT_RECONCILE_BUDGET } from "../src/payments/config";
import { configOrExit } from "./lib/config";
import { parseReconcileArgs, ReconcileArgsError, RECONCILE_USAGE } from "./lib/reconcile-args";
import { requireDatabase, runTool } from "../tools/db/require-database";
import { userInfo } from "node:os";

let command;
try {
  command = parseReconcileArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof ReconcileArgsError)) throw error;
  console.error(`reconcile: ${error.message}.\n${RECONCILE_USAGE}`);
  process.exit(2);
}

// The database's variables and PAYMENTS_PROVIDER_URL: nothing the worker or the server needs.
const config = configOrExit("reconcile", () => loadReconcileConfig(process.env));
const providerUrl = resolveProviderUrl(config.providerUrl);
const providerSecretKey =
  resolveProviderSecretKey(config.providerSecretKey) ??
  (config.demo ? DEMO_PROVIDER_SECRET_KEY : undefined);
// Resolving a finding needs the database only.
if (!providerUrl && command.kind !== "resolve") {
  console.error(
    "No payment provider to reconcile with: start the app with `npm run dev`, or set PAYMENTS_PROVIDER_URL.",
  );
  process.exit(2);
}
if (!providerSecretKey && command.kind !== "resolve") {
  console.error(
    "No secret key to call the payment provider with: set PAYMENTS_PROVIDER_SECRET_KEY (the key the provider gave this shop).",
  );
  process.exit(2);
}
const db = createDb(await requireDatabase());
await runTool(async () => {
  try {
    if (command.kind === "resolve") return await resolve(command.id, command.note);
    const reconciliation = createReconciliation(
      db,
      createProviderClient(providerUrl!, providerSecretKey!),
      // Up to now: an operator asking for a run wants the books as they stand.
      // Each finding recorded, opened again or closed: one line of the process's log.
      { budget: DEFAULT_RECONCILE_BUDGET, settleSeconds: 0, logger },
    );
    if (command.kind === "run") return report(await reconciliation.runOnce());
    // --since and --all: run after run, each from where the budget stopped the last, until the
    // range is judged (or a run cannot move on: a page refused, or no charge read).
    const since = command.kind === "since" ? command.since : undefined;
    let resume: Date | undefined;
    for (;;) {
      const result = await reconciliation.runSince(since, resume);
      report(result);
      const moved = result.continueFrom && (!resume || result.continueFrom > resume);
      if (!result.continueFrom || !moved || result.budget.stopped?.reason === "page-too-large")
        return;
      resume = result.continueFrom;
    }
  } finally {
    await db.$disconnect();
  }
});

function report(result: ReconciliationResult) {
  const { findings, recorded, reopened, closed, closedDeadLetters, charges } = result;
  const until = result.judgedUntil.toISOString();
  if (findings.length === 0)
    console.log(`reconciliation: ${charges} charge(s) judged up to ${until} and the orders agree`);
  for (const f of findings) {
    console.log(
      `${f.kind}\torder=${f.orderId ?? "-"}\tcharges=${f.chargeIds.join(",") || "-"}\t${JSON.stringify(f.details)}`,
    );
  }
  if (result.more) console.log(`reconciliation: the first ${findings.length} finding(s) listed`);
  if (closedDeadLetters > 0)
    console.log(
      `reconciliation: closed ${closedDeadLetters} dead-lettered payment(s) whose order was paid after all`,
    );
  console.log(
    `reconciliation: judged up to ${until}: ${findings.length}${result.more ? "+" : ""} finding(s), ${recorded} new, ${reopened} opened again, ${closed} closed`,
  );
  for (const line of leftForLater(result)) console.log(line);
  const stopped = budgetLine(result);
  if (stopped) console.log(stopped);
  // A page larger than the cap: the provider answered something that is not a page.
  if (result.budget.stopped?.reason === "page-too-large") process.exitCode = 1;
}

/** What the run did not judge, and why. */
function leftForLater(result: ReconciliationResult): string[] {
  const lines = [];
  if (result.inFlight > 0)
    lines.push(
      `reconciliation: ${result.inFlight} charge(s) left for a later run: in flight, their order still PENDING and the charge younger than ${PENDING_SETTLE_SECONDS / 60} minutes`,
    );
  if (result.unjudgedOrders > 0)
    lines.push(
      `reconciliation: ${result.unjudgedOrders} paid order(s) not judged: the lookup of their charges ran out of budget`,
    );
  return lines;
}

/** The audit log names the operating-system user who ran the command. */
async function resolve(id: string, note: string) {
  const actor = `${userInfo().username} (npm run reconcile)`;
  const outcome = await db.$transaction((tx) => resolveFinding(tx, { id, note, actor }));
  if (outcome.status === "not-found") {
    console.error(`reconcile: no reconciliation finding has the id ${id}.`);
    process.exitCode = 1;
  } else if (outcome.status === "already-resolved") {
    console.log(
      `reconciliation: finding ${id} was already resolved by ${outcome.resolvedBy ?? "someone"} at ${outcome.resolvedAt.toISOString()}`,
    );
  } else {
    console.log(`reconciliation: finding ${id} resolved (audit entry ${outcome.auditId})`);
  }
}
