// Tests build their configuration (they do not edit the environment) and get the app's parts for
// a test database: the same composition root as the server, on the test's own client.
import { createServerApp, type ServerApp } from "../server/app";
import { loadConfig, type AppConfig } from "../server/config";
import type { Db } from "../server/db/client";
import type { Engine } from "../server/engine";

/** The configuration of a test: demo mode (the fixtures are the demo accounts), quiet logs. */
export function testConfig(variables: Record<string, string | undefined> = {}): AppConfig {
  return loadConfig({ NODE_ENV: "test", DEMO_MODE: "1", ...variables });
}

// One app per test database client, so a file's calls share one engine (its counters, its replay
// cache), as requests to one server do. A test-only table: production has one app per process.
const apps = new WeakMap<Db, ServerApp>();

/** The app on `db` with the test configuration (made on first use). */
export function testApp(db: Db): ServerApp {
  let app = apps.get(db);
  if (!app) apps.set(db, (app = createServerApp(testConfig(), { db })));
  return app;
}

/** A new app on `db` with its own engine, for a test that needs other settings. */
export function testAppWith(db: Db, variables: Record<string, string | undefined>): ServerApp {
  return createServerApp(testConfig(variables), { db });
}

/** The engine of the test app on `db`. */
export function engineFor(db: Db): Engine {
  return testApp(db).engine;
}
