// One soak profile, start to finish: PostgreSQL (and PgBouncer), the instances, HAProxy; the
// clients, the operator and the faults; then the drain, the jobs once more, and the verdict.
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { freePort } from "../tools/process";
import { renderChart } from "./chart";
import { evaluate, passed, type CheckRow } from "./checker";
import { runClient } from "./client";
import { Profile, type SoakConfig } from "./config";
import { PG_PASSWORD, PG_USER, DATABASE, readStock, soakProductIds, startSoakDatabase } from "./database";
import { readFacts } from "./facts";
import { runFaults } from "./faults";
import { startHaproxy, waitForPort } from "./haproxy";
import { createInstances } from "./instances";
import { runEndOfRunJobs, waitForOutboxDrain } from "./jobs";
import { runOperator } from "./operator";
import { startPgbouncer } from "./pgbouncer";
import { onCleanup, stopChild } from "./processes";
import { Recorder, seededRandom } from "./record";
import { renderReport } from "./report";

export interface ProfileResult {
  ok: boolean;
  rows: CheckRow[];
  report: string;
}

export async function runProfile(profile: Profile, config: SoakConfig, dir: string, log: (m: string) => void): Promise<ProfileResult> {
  const startedAt = new Date();
  const pgPort = await freePort();
  const db = await startSoakDatabase(path.join(dir, "pg"), pgPort);
  const forgetDb = onCleanup(() => db.stop());
  log(`PostgreSQL on ${pgPort}`);
  let appUrl = db.url;
  let bouncer;
  if (profile === Profile.PGBOUNCER) {
    const port = await freePort();
    bouncer = startPgbouncer({ port, pgPort, database: DATABASE, user: PG_USER, password: PG_PASSWORD, dir });
    await waitForPort("pgbouncer", port, 10_000, bouncer);
    appUrl = `postgresql://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${DATABASE}`;
    log(`PgBouncer (transaction pooling) on ${port}`);
  }
  const ports = await Promise.all(Array.from({ length: config.instances }, () => freePort()));
  const instances = createInstances({
    ports,
    dir,
    env: {
      DATABASE_URL: appUrl,
      // What must hold a session (the reaper's session lock) goes straight to PostgreSQL.
      ...(config.directSessions ? { DIRECT_DATABASE_URL: db.url } : {}),
      // PgBouncer 1.18 in transaction mode keeps no prepared statements: said outright, so the
      // profile does not depend on how the app infers it (--sessionsThroughPgbouncer sets no
      // DIRECT_DATABASE_URL).
      DATABASE_PREPARED_STATEMENTS: bouncer ? "0" : "1",
      DEMO_MODE: "1",
      IDEMPOTENCY_LEASE_MS: String(config.leaseMs),
      DEMO_PROVIDER_FAILURE_RATE: String(config.providerFailureRate),
      DEMO_PROVIDER_TIMEOUT_RATE: String(config.providerTimeoutRate),
      // A killed instance's claimed outbox rows come back within seconds, not the default minute.
      OUTBOX_LEASE_MS: "10000",
      // A row the failing provider pushed to its 7th attempt waits up to 128 s by default; after the
      // provider recovers, the drain window must cover every wait a row can be in, or a row that
      // is only waiting its turn is counted as stuck.
      OUTBOX_MAX_BACKOFF_MS: String(Math.floor(config.drainMs / 3)),
    },
  });
  await instances.startAll();
  const lbPort = await freePort();
  const haproxy = startHaproxy({ port: lbPort, backends: ports, serverTimeoutMs: config.haproxyServerTimeoutMs, maxconnPerServer: 10, dir });
  await waitForPort("haproxy", lbPort, 10_000, haproxy);
  log(`${config.instances} instances on ${ports.join(", ")} behind HAProxy on ${lbPort}`);

  const initialStock = await readStock(db.url);
  const products = await soakProductIds(db.url);
  const rec = new Recorder();
  const fireEndsAt = config.durationMs;
  const budget = { left: config.maxRequests };
  const runId = `${profile}-${randomBytes(3).toString("hex")}`;
  const clientOptions = {
    port: lbPort,
    runId,
    products,
    budget,
    seed: config.seed,
    fireEndsAt,
    settleEndsAt: fireEndsAt + config.settleMs,
    dropRate: config.dropRate,
    slowRate: config.slowRate,
    slowMs: config.slowMs,
    resendRate: config.resendRate,
  };
  log(`under fire for ${Math.round(config.durationMs / 1000)} s (seed ${config.seed})`);
  await Promise.all([
    ...Array.from({ length: config.clients }, (_, i) => runClient(i, clientOptions, rec)),
    runOperator({ port: lbPort, everyMs: config.operatorEveryMs, until: fireEndsAt, random: seededRandom(config.seed) }, rec),
    runFaults(config, rec, instances, db),
  ]);
  const endMs = rec.now();
  log(`clients done after ${Math.round(endMs / 1000)} s, ${rec.requests.length} requests; the provider recovers, the outbox drains`);

  rec.fault("provider-recovers", "instances restarted with the provider's failure rates at 0");
  await instances.restartAllWith({ DEMO_PROVIDER_FAILURE_RATE: "0", DEMO_PROVIDER_TIMEOUT_RATE: "0" });
  const drained = await waitForOutboxDrain(db.url, config.drainMs);
  log(drained ? "outbox drained" : `outbox not drained after ${config.drainMs} ms`);
  await instances.stopAll();
  const jobs = await runEndOfRunJobs({ appUrl, throughPooler: bouncer !== undefined, leaseMs: config.leaseMs });
  log(`end-of-run jobs: ${jobs}`);

  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const facts = await readFacts(client, config.leaseMs / 1000).finally(() => client.end());
  const rows = evaluate(facts, { intents: rec.intents, requests: rec.requests, initialStock, fireEndsAt });
  const report = renderReport({ profile, config, rows, faults: rec.faults, startedAt, requests: rec.requests.length });
  const chart = renderChart({
    title: `once soak, profile ${profile}, ${startedAt.toISOString()}`,
    requests: rec.requests,
    intents: rec.intents,
    faults: rec.faults,
    endMs,
  });
  // Everything the clients saw, beside the logs, for a look at the offenders.
  writeFileSync(path.join(dir, "run.json"), JSON.stringify({ intents: rec.intents, requests: rec.requests, faults: rec.faults }));
  mkdirSync(config.outDir, { recursive: true });
  writeFileSync(path.join(config.outDir, `${profile}.md`), report);
  writeFileSync(path.join(config.outDir, `${profile}.svg`), chart);

  await stopChild(haproxy);
  if (bouncer) await stopChild(bouncer);
  await db.stop();
  forgetDb();
  return { ok: passed(rows), rows, report };
}
