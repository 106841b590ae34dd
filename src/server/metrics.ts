// GET /api/metrics: Prometheus text for the admin (bearer token, or the operator's session cookie).
// The counters come from the IdempotencyCounter table, so one scrape of any instance shows the
// whole cluster's counts; the gauges are live counts. Everything is read by collectors at scrape
// time: one set of queries per scrape, shared by every metric.
import { Counter, Gauge, Registry } from "prom-client";
import type { Db } from "./db/client";
import type { Engine } from "./engine";
import { principalFromHeaders } from "./auth/principal";
import { readStats } from "./admin/stats";
import { logger } from "./logger";
import type { Refusals } from "../http/refusals";
import { storeFailureAnswer } from "../http/store-failure";
import { confirmingStandbys, ReplicationMode } from "./replication";

type Stats = Awaited<ReturnType<typeof readStats>>;

export interface MetricsRegistry {
  registry: Registry;
  /** Renders every metric from one fresh read of the database. */
  scrape: () => Promise<string>;
}

/** What a gauge reads at scrape time: the scrape's one read of the database, and the engine. */
type Sources = { stats: () => Promise<Stats>; engine: Engine };

/** A gauge of one value, or of one value per `label` value (a status, a kind). */
type GaugeSpec = {
  name: string;
  help: string;
  label?: string;
  value: (sources: Sources) => Promise<number | Record<string, number>> | number;
};
/** A counter read at scrape time, as each label set with its count. */
type CounterSpec = { name: string; help: string; labelNames: string[] };
type CounterRows = [Record<string, string>, number][];

/** Every gauge, in the order a scrape prints them (after the events counter). */
const GAUGES: GaugeSpec[] = [
  {
    name: "once_idempotency_replay_cache_bytes",
    help: "What this instance's replay cache holds, in bytes (bounded at 32 MiB; answers over 1 MiB are kept without their body: event bodies_omitted).",
    value: ({ engine }) => engine.replayCacheUsage().bytes,
  },
  {
    name: "once_idempotency_replay_cache_entries",
    help: "Answers in this instance's replay cache (bounded at 10 000 answers).",
    value: ({ engine }) => engine.replayCacheUsage().entries,
  },
  {
    name: "once_idempotency_keys",
    help: "Idempotency keys stored, by status.",
    label: "status",
    value: async ({ stats }) => (await stats()).keys.byStatus,
  },
  {
    name: "once_idempotency_stuck_leases",
    help: "PROCESSING keys whose lease has expired (by the database's clock).",
    value: async ({ stats }) => (await stats()).keys.stuck,
  },
  {
    name: "once_idempotency_reaper_lag_seconds",
    help: "Age of the oldest idempotency key past its retention (0 when the reaper is caught up). Growing past a few reaper intervals means the key table grows without bound.",
    value: async ({ stats }) => (await stats()).reaper.lagSeconds,
  },
  {
    name: "once_outbox_messages",
    help: "Payment outbox messages, by status (DEAD = dead-lettered).",
    label: "status",
    value: async ({ stats }) => (await stats()).outbox,
  },
  {
    name: "once_store_commits_synchronous",
    help: "1 when the key store's commits wait for a synchronous standby (an answer survives a failover), 0 when not (asynchronous, standby missing, or no standby): see docs/operations.md.",
    value: async ({ stats }) =>
      (await stats()).replication.mode === ReplicationMode.SYNCHRONOUS ? 1 : 0,
  },
  {
    name: "once_store_synchronous_standbys",
    help: "Standbys whose confirmation the key store's commits wait for now (pg_stat_replication sync_state sync or quorum).",
    value: async ({ stats }) => confirmingStandbys((await stats()).replication).length,
  },
  {
    name: "once_reconciliation_open_findings",
    help: "Reconciliation findings open now (not resolved, or found again after being resolved), by kind: every kind is a disagreement between the provider's books and the orders to act on (docs/operations.md).",
    label: "kind",
    value: async ({ stats }) => (await stats()).openFindingsByKind,
  },
];

/** Duplicates waiting on a request in flight here (src/server/edge/waiters.ts). */
const WAITERS_GAUGE = {
  name: "once_http_waiters",
  help: "Requests waiting on this instance for an identical request in flight here (Prefer: wait): they hold no place among the requests in flight and no connection, and are answered from memory when it ends.",
};

const EVENTS_COUNTER: CounterSpec = {
  name: "once_idempotency_events_total",
  help: "Idempotency engine events per tenant (key scope), procedure and event: executed, replayed, conflicts, mismatches, released, busted, takeovers, store_errors (database unreachable), store_busy (no pool connection free in time), too_many_keys, fenced, bodies_omitted (an answer stored without its body: larger than 1 MiB). Cluster-wide (from IdempotencyCounter).",
  labelNames: ["tenant", "procedure", "event"],
};

const REFUSALS_COUNTER: CounterSpec = {
  name: "once_http_refusals_total",
  help: "Requests this instance answered without doing their work, by reason and stage: admission (store_busy: refused at once, no place expected within the store's wait), queue (store_busy: queued for the whole wait, no place came), connection (too_many_connections: past the cap per peer address), store (store_busy: no pool connection free within the wait; store_unavailable: the database unreachable), body (payload_too_large; request_timeout: the body not in by the deadline). Per instance, since it started.",
  labelNames: ["reason", "stage"],
};

/** Every finding reconciliation found, by kind: recorded, or opened again after a resolve. */
const FINDINGS_COUNTER: CounterSpec = {
  name: "once_reconciliation_findings_total",
  help: "Reconciliation findings found, by kind: each counted once when first recorded and once more each time it is opened again after being resolved (docs/operations.md). Cluster-wide (from ReconciliationFinding); increase() over it alerts on new disagreements even while old ones stay open.",
  labelNames: ["kind"],
};

export function createMetricsRegistry(
  db: Db,
  engine: Engine,
  refusals?: Refusals,
  waiters?: { size: number },
): MetricsRegistry {
  const registry = new Registry();
  // One read per scrape, shared by every collector: the first collector starts it, scrape() drops
  // it before and after, so the next scrape reads afresh.
  let current: Promise<Stats> | null = null;
  const sources: Sources = { stats: () => (current ??= readStats(db, engine)), engine };
  const { stats } = sources;
  registerCounter(registry, EVENTS_COUNTER, async () => {
    const { counters, events } = await stats();
    return counters.flatMap(({ tenant, procedure, counts }) =>
      events.map((event): CounterRows[number] => [{ tenant, procedure, event }, counts[event]]),
    );
  });
  if (refusals)
    registerCounter(registry, REFUSALS_COUNTER, async () =>
      refusals.snapshot().map(({ reason, stage, count }) => [{ reason, stage }, count]),
    );
  registerCounter(registry, FINDINGS_COUNTER, async () =>
    Object.entries((await stats()).findingsFoundByKind).map(([kind, n]) => [{ kind }, n]),
  );
  for (const spec of GAUGES) registerGauge(registry, spec, sources);
  if (waiters) registerGauge(registry, { ...WAITERS_GAUGE, value: () => waiters.size }, sources);
  return {
    registry,
    scrape: async () => {
      current = null;
      try {
        return await registry.metrics();
      } finally {
        current = null;
      }
    },
  };
}

function registerCounter(registry: Registry, spec: CounterSpec, rows: () => Promise<CounterRows>) {
  new Counter({
    ...spec,
    registers: [registry],
    async collect() {
      const read = await rows();
      this.reset();
      for (const [labels, n] of read) this.inc(labels, n);
    },
  });
}

function registerGauge(registry: Registry, spec: GaugeSpec, sources: Sources): void {
  new Gauge({
    name: spec.name,
    help: spec.help,
    labelNames: spec.label ? [spec.label] : [],
    registers: [registry],
    async collect() {
      const value = await spec.value(sources);
      if (typeof value === "number") return void this.set(value);
      for (const [key, n] of Object.entries(value)) this.set({ [spec.label!]: key }, n);
    },
  });
}

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });

/** A scraper retries on 503: the database is what failed, not the request. */
const unreachable = (error: unknown) =>
  storeFailureAnswer(error, {
    busy: "The database is busy (no connection came free in time)",
    unavailable: "The database cannot be reached",
  });

type MetricsApp = { db: Db; metrics: MetricsRegistry; config: { demo: boolean } };

/**
 * The admin, by bearer token (Prometheus) or by the operator's session cookie (the dashboard's
 * browser): 401 with neither or with a bad one, 403 for a tenant. A cookie-authenticated GET is
 * safe to allow: it changes nothing, and another site cannot read the answer (no CORS headers).
 */
export async function handleMetricsRequest(app: MetricsApp, req: Request): Promise<Response> {
  const refused = await refusal(app, req);
  if (refused) return refused;
  const m = app.metrics;
  try {
    return text(200, await m.scrape(), {
      "content-type": m.registry.contentType,
      "cache-control": "no-store",
    });
  } catch (error) {
    logger.warn({ error }, "metrics: scrape failed");
    return unreachable(error);
  }
}

/** The answer to a caller who may not read the metrics; undefined for the admin. */
async function refusal(app: MetricsApp, req: Request): Promise<Response | undefined> {
  const authorization = req.headers.get("authorization");
  if (authorization !== null && !/^Bearer\s+\S+$/i.test(authorization)) {
    return text(401, "Send Authorization: Bearer <admin token>\n", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  }
  let principal;
  try {
    principal = await principalFromHeaders(app.db, req.headers, { demo: app.config.demo });
  } catch (error) {
    logger.warn({ error }, "metrics: database unreachable");
    return unreachable(error);
  }
  if (!principal) {
    const [body, error] = authorization
      ? ["Unknown token\n", ', error="invalid_token"']
      : ["Sign in as the operator, or send Authorization: Bearer <admin token>\n", ""];
    return text(401, body, { "www-authenticate": `Bearer realm="metrics"${error}` });
  }
  return principal.role === "ADMIN" ? undefined : text(403, "Admins only\n");
}
