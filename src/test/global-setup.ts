// Starts one real PostgreSQL (embedded) for the whole Vitest run, migrates and seeds a template
// database, and hands its address to the test files. Each file clones the template (fast, and
// isolated: no file sees another's rows).
import type { TestProject } from "vitest/node";
import { makeTempDataDir, startEmbeddedPostgres } from "../server/db/embedded";
import { setupDatabase } from "../server/db/setup";

export const TEMPLATE_DATABASE = "once_template";

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  const dataDir = await makeTempDataDir("once-vitest-");
  const server = await startEmbeddedPostgres({ dataDir, persistent: false });
  await server.createDatabase(TEMPLATE_DATABASE);
  // The tests' fixtures are the demo accounts and tokens; tests of the doors without demo mode
  // pass `{ demo: false }` to the code they call.
  await setupDatabase(server.url(TEMPLATE_DATABASE), undefined, { demo: true });
  project.provide("pgAdminUrl", server.url("postgres"));
  project.provide("pgTemplate", TEMPLATE_DATABASE);
  return async () => {
    await server.stop();
  };
}
