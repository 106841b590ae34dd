// `npm run jobs -- <job…>`: run the engine's maintenance jobs once, by hand, and print what they
// did. The server runs them on a schedule; this is for operators (and cron) — safe beside running
// instances, since each job takes its advisory lock.
//   npm run jobs -- reap      delete keys past their retention
//   npm run jobs -- sweep     release PROCESSING keys whose lease ended long ago
//   npm run jobs -- all       both (the default)
import { reapExpiredKeys, sweepStuckKeys } from "@once/idempotency/jobs";
import { poolRunner, type SqlRunner } from "@once/idempotency/sql";
import { createDb, poolOf } from "../src/server/db/client";
import { requireDatabase, runTool } from "../tools/db/require-database";

const JOBS = {
  reap: (run: SqlRunner) => reapExpiredKeys(run),
  sweep: (run: SqlRunner) => sweepStuckKeys(run),
} as const;
type Job = keyof typeof JOBS;

const asked = process.argv.slice(2);
const unknown = asked.filter((a) => a !== "all" && !(a in JOBS));
if (unknown.length) {
  console.error(
    `unknown job(s): ${unknown.join(", ")}. Jobs: ${Object.keys(JOBS).join(", ")}, all`,
  );
  process.exit(2);
}
const jobs: Job[] =
  asked.length === 0 || asked.includes("all") ? (Object.keys(JOBS) as Job[]) : (asked as Job[]);

const db = createDb(await requireDatabase(), { max: 2 });
await runTool(async () => {
  try {
    for (const job of jobs) {
      const result = await JOBS[job](poolRunner(poolOf(db)!));
      console.log(
        `${job}: ${JSON.stringify(result.ran ? { ...result, keys: undefined } : { ran: false, why: "another instance holds the lock" })}`,
      );
    }
  } finally {
    await db.$disconnect();
  }
});
