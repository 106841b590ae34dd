// `npm run db:setup`: migrate and seed the server named by DATABASE_URL (the demo accounts and
// tokens only with DEMO_MODE=1).
import { setupDatabase } from "../src/server/db/setup";

const url = process.env.DATABASE_URL;
if (!url) {
  console.error("DATABASE_URL is not set. (`npm run dev` sets up the embedded database by itself.)");
  process.exit(2);
}
await setupDatabase(url, console.log);
console.log("[db] migrated and seeded");
