// `npm run db:setup`: migrate and seed the server named by DATABASE_URL (the demo accounts and
// tokens only with DEMO_MODE=1). The migrations go through DIRECT_DATABASE_URL when it is set
// (behind a transaction-mode pooler their session advisory lock needs a real session).
import { loadProcessConfig } from "../src/server/config";
import { setupDatabase } from "../tools/db/setup";
import { requireDatabase, runTool } from "./lib/database";

if (!process.env.DATABASE_URL) {
  console.error("DATABASE_URL is not set: `npm run db:setup` prepares your own PostgreSQL (`npm run dev` sets up the embedded one by itself).");
  process.exit(2);
}
const config = loadProcessConfig();
const url = await requireDatabase();
await runTool(async () => {
  await setupDatabase(url, console.log, { demo: config.demo, directUrl: config.database.directUrl });
  console.log("[db] migrated and seeded");
});
