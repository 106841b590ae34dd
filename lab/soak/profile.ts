// One soak profile, start to finish: the data (embedded PostgreSQL, PgBouncer, or a Patroni
// cluster: backend.ts), the instances, HAProxy, the payment worker; the clients, the operator and
// the faults; then the drain, the jobs once more, and the verdict.
import { randomBytes } from "node:crypto";
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { portAllocator, startEmbeddedBackend, type SoakBackend } from "./backend";
import { renderChart } from "./chart";
import { evaluate, type CheckRow } from "./checker";
import { runClient } from "./client";
import { isPatroni, Profile, type SoakConfig } from "./config";
import { readStock, soakProductIds } from "./database";
import { readFactsAt } from "./facts";
import { startHaproxy, waitForPort } from "./haproxy";
import { exchange } from "./http";
import { createInstances } from "./instances";
import {
  RECONCILE_EVERY_MS,
  RECONCILE_SETTLE_WAIT_MS,
  STUCK_AFTER_SECONDS,
  waitForOutboxDrain,
  waitForReconciliation,
} from "./jobs";
import { runOperator } from "./operator";
import { startPatroniBackend } from "./patroni-backend";
import { onCleanup, stopChild } from "./processes";
import { Recorder, seededRandom } from "./record";
import { renderReport } from "./report";
import { judgeProfile, type ProfileVerdict } from "./verdict";
import { startSoakWorker } from "./worker";
import {
  startProviderService,
  type ProviderService,
  type ProviderServiceOptions,
} from "../../tools/provider-service";
import { DEMO_WEBHOOK_SECRET } from "../../src/payments";

export interface ProfileResult {
  verdict: ProfileVerdict;
  rows: CheckRow[];
  report: string;
}

/** One gauge's value from the app's /api/metrics (the operator's view), or "unread". */
async function readGauge(port: number, name: string): Promise<string> {
  const result = await exchange({
    port,
    method: "GET",
    path: "/api/metrics",
    headers: { authorization: "Bearer admin_demo_token" },
    timeoutMs: 30_000,
  });
  if (result.kind !== "answer" || result.answer.status !== 200) return "unread";
  return new RegExp(`^${name} (\\S+)$`, "m").exec(result.answer.body)?.[1] ?? "unread";
}

type ProviderRates = { failureRate: number; timeoutRate: number };

/**
 * The payment provider, a service of its own (its process, its port, its database: outside the
 * cluster in the patroni profiles), posting its signed events to the shop through HAProxy. It
 * fails at the configured rates during the fire and is restarted healthy for the drain; `stop`
 * stops whichever run of it is current, so the cleanup hook can hold this object.
 */
class Provider {
  private service!: ProviderService;

  constructor(private readonly options: Omit<ProviderServiceOptions, keyof ProviderRates>) {}

  get url(): string {
    return this.service.url;
  }

  async start(rates: ProviderRates): Promise<void> {
    this.service = await startProviderService({ ...this.options, ...rates });
  }

  stop(): Promise<void> {
    return this.service.stop();
  }
}

export async function runProfile(
  profile: Profile,
  config: SoakConfig,
  dir: string,
  log: (m: string) => void,
): Promise<ProfileResult> {
  const startedAt = new Date();
  const port = portAllocator(config.basePort);
  const backend = isPatroni(profile)
    ? await startPatroniBackend(profile, config, dir, port, log)
    : await startEmbeddedBackend(profile, dir, port, log);
  const forgetBackend = onCleanup(() => backend.stop());
  const ports = await Promise.all(Array.from({ length: config.instances }, () => port()));
  const lbPort = await port();
  const providerPort = await port();
  // The shop's secret key with the provider, made for this run: the provider serves the shop under
  // it, and the shop's servers and worker call with it.
  const providerSecretKey = `sk_soak_${randomBytes(24).toString("hex")}`;
  const provider = new Provider({
    databaseUrl: backend.providerDatabaseUrl,
    secretKey: providerSecretKey,
    port: providerPort,
    webhook: {
      url: `http://127.0.0.1:${lbPort}/api/webhooks/payments`,
      secret: DEMO_WEBHOOK_SECRET,
    },
    log: (line) => appendFileSync(path.join(dir, "provider.log"), `${line}\n`),
  });
  await provider.start({
    failureRate: config.providerFailureRate,
    timeoutRate: config.providerTimeoutRate,
  });
  const forgetProvider = onCleanup(() => provider.stop());
  log(`the payment provider on ${provider.url}`);
  const env = appEnv(config, backend, provider.url, providerSecretKey);
  const shop = await startShop(config, backend, { ports, lbPort, dir, env }, log);
  const fired = await fire(profile, config, backend, shop, log);
  await drain(config, backend, shop, provider, fired.rec, log);
  forgetProvider();
  const result = await checkAndReport(profile, config, backend, fired, startedAt, dir);
  await stopChild(shop.haproxy);
  await backend.stop();
  forgetBackend();
  log(result.verdict.sentence);
  return result;
}

/** The app's environment, the same for every instance and the payment worker. */
function appEnv(
  config: SoakConfig,
  backend: SoakBackend,
  providerUrl: string,
  providerSecretKey: string,
): Record<string, string> {
  return {
    DATABASE_URL: backend.appUrl,
    // What must hold a session (the reaper's session lock, LISTEN) goes straight to PostgreSQL.
    ...(config.directSessions ? { DIRECT_DATABASE_URL: backend.directUrl } : {}),
    // PgBouncer 1.18 in transaction mode keeps no prepared statements: said outright, so the
    // profile does not depend on how the app infers it (--sessionsThroughPgbouncer sets no
    // DIRECT_DATABASE_URL).
    DATABASE_PREPARED_STATEMENTS: backend.throughPooler ? "0" : "1",
    PAYMENTS_PROVIDER_URL: providerUrl,
    PAYMENTS_PROVIDER_SECRET_KEY: providerSecretKey,
    // Reconciliation every 10 s: a lost order's charge is a finding well within the drain.
    RECONCILE_INTERVAL_MS: String(RECONCILE_EVERY_MS),
    ...(backend.separateWorker ? { ONCE_PAYMENT_JOBS: "0" } : {}),
    DEMO_MODE: "1",
    IDEMPOTENCY_LEASE_MS: String(config.leaseMs),
    // A killed instance's claimed outbox rows come back within seconds, not the default minute.
    OUTBOX_LEASE_MS: "10000",
    // A row the failing provider pushed to its 7th attempt waits up to 128 s by default; after the
    // provider recovers, the drain window must cover every wait a row can be in, or a row that
    // is only waiting its turn is counted as stuck.
    OUTBOX_MAX_BACKOFF_MS: String(Math.floor(config.drainMs / 3)),
  };
}

type Shop = Awaited<ReturnType<typeof startShop>>;

/** The instances, the payment worker when it runs apart, and HAProxy in front of the instances. */
async function startShop(
  config: SoakConfig,
  backend: SoakBackend,
  at: { ports: number[]; lbPort: number; dir: string; env: Record<string, string> },
  log: (m: string) => void,
) {
  const { ports, lbPort, dir, env } = at;
  const instances = createInstances({ ports, dir, env });
  await instances.startAll();
  const worker = backend.separateWorker ? startSoakWorker({ env, dir, log }) : undefined;
  const haproxy = startHaproxy({
    port: lbPort,
    backends: ports,
    serverTimeoutMs: config.haproxyServerTimeoutMs,
    maxconnPerServer: 10,
    dir,
  });
  await waitForPort("haproxy", lbPort, 10_000, haproxy);
  log(
    `${config.instances} instances on ${ports.join(", ")} behind HAProxy on ${lbPort}${worker ? ", the payment worker in its own process" : ""}`,
  );
  const synchronousGauge = await readGauge(lbPort, "once_store_commits_synchronous");
  log(`/api/metrics: once_store_commits_synchronous ${synchronousGauge}`);
  return { instances, worker, haproxy, lbPort, synchronousGauge };
}

type Fired = Awaited<ReturnType<typeof fire>>;

/** The clients, the operator and the backend's faults, all at once until the fire ends. */
async function fire(
  profile: Profile,
  config: SoakConfig,
  backend: SoakBackend,
  shop: Shop,
  log: (m: string) => void,
) {
  const initialStock = await readStock(backend.directUrl);
  const products = await soakProductIds(backend.directUrl);
  const rec = new Recorder();
  const fireEndsAt = config.durationMs;
  const clientOptions = {
    port: shop.lbPort,
    runId: `${profile}-${randomBytes(3).toString("hex")}`,
    products,
    budget: { left: config.maxRequests },
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
    runOperator(
      {
        port: shop.lbPort,
        everyMs: config.operatorEveryMs,
        until: fireEndsAt,
        random: seededRandom(config.seed),
      },
      rec,
    ),
    backend.faults(config, rec, shop.instances),
  ]);
  const endMs = rec.now();
  log(
    `clients done after ${Math.round(endMs / 1000)} s, ${rec.requests.length} requests; the provider recovers, the outbox drains`,
  );
  return { rec, initialStock, fireEndsAt, endMs, synchronousGauge: shop.synchronousGauge };
}

/**
 * The provider restarted healthy, the outbox drained and reconciliation caught up, then the shop
 * and the provider stopped: the facts are read from a system at rest.
 */
async function drain(
  config: SoakConfig,
  backend: SoakBackend,
  shop: Shop,
  provider: Provider,
  rec: Recorder,
  log: (m: string) => void,
) {
  rec.fault("provider-recovers", "the provider restarted with its failure rates at 0");
  await provider.stop();
  await provider.start({ failureRate: 0, timeoutRate: 0 });
  const drained = await waitForOutboxDrain(backend.directUrl, config.drainMs);
  log(drained ? "outbox drained" : `outbox not drained after ${config.drainMs} ms`);
  // Reconciliation runs by itself in whichever process runs payments: wait (no command by hand)
  // until it has judged every charge the provider holds, then read its findings.
  const reconciled = await waitForReconciliation(
    backend.directUrl,
    backend.providerDatabaseUrl,
    RECONCILE_SETTLE_WAIT_MS,
  );
  log(
    reconciled
      ? "reconciliation has judged every charge"
      : `reconciliation had not judged every charge after ${RECONCILE_SETTLE_WAIT_MS} ms`,
  );
  await shop.instances.stopAll();
  await shop.worker?.stop();
  if (shop.worker)
    log(
      `the payment worker was restarted ${shop.worker.restarts()} time(s) after exiting by itself`,
    );
  await provider.stop();
}

/** The facts against what the clients saw, the verdict, and the report, chart and run saved. */
async function checkAndReport(
  profile: Profile,
  config: SoakConfig,
  backend: SoakBackend,
  fired: Fired,
  startedAt: Date,
  dir: string,
): Promise<ProfileResult> {
  const { rec, initialStock, fireEndsAt, endMs, synchronousGauge } = fired;
  const facts = await readFactsAt(
    backend.directUrl,
    backend.providerDatabaseUrl,
    STUCK_AFTER_SECONDS,
  );
  const rows = evaluate(facts, {
    intents: rec.intents,
    requests: rec.requests,
    initialStock,
    fireEndsAt,
    faults: rec.faults,
  });
  // One verdict for the saved report, the console and the exit code (verdict.ts).
  const verdict = judgeProfile(profile, rows);
  const report = renderReport({
    profile,
    config,
    rows,
    verdict,
    faults: rec.faults,
    startedAt,
    requests: rec.requests.length,
    samples: rec.requests,
    synchronousGauge,
  });
  const chart = renderChart({
    title: `once soak, profile ${profile}, ${startedAt.toISOString()}`,
    requests: rec.requests,
    intents: rec.intents,
    faults: rec.faults,
    endMs,
  });
  // Everything the clients saw, beside the logs, for a look at the offenders.
  writeFileSync(
    path.join(dir, "run.json"),
    JSON.stringify({ intents: rec.intents, requests: rec.requests, faults: rec.faults }),
  );
  mkdirSync(config.outDir, { recursive: true });
  writeFileSync(path.join(config.outDir, `${profile}.md`), report);
  writeFileSync(path.join(config.outDir, `${profile}.svg`), chart);
  return { verdict, rows, report };
}
