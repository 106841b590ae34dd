// `npm run db:setup`: migrate and seed the server named by DATABASE_URL (the demo accounts and
// tokens only with DEMO_MODE=1). The migrations go through DIRECT_DATABASE_URL when it is set
// (behind a transaction-mode pooler their session advisory lock needs a real session). It reads
// the database's variables and DEMO_MODE, nothing else: a deploy migrates before the app's
// secrets exist.
import { loadSetupConfig } from "../src/server/config";
import { setupDatabase } from "../tools/db/setup";
import { configOrExit } from "./lib/config";
import { requireDatabase, runTool } from "../tools/db/require-database";

const config = configOrExit("db:setup", () => loadSetupConfig(process.env));
await requireDatabase();
await runTool(async () => {
  await setupDatabase(config.database.url, console.log, {
    demo: config.demo,
    directUrl: config.database.directUrl,
  });
  console.log("[db] migrated and seeded");
});
