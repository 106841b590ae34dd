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
import { confirmingStandbys, ReplicationMode } from "./replication";

type Stats = Awaited<ReturnType<typeof readStats>>;

export interface MetricsRegistry {
  registry: Registry;
  /** Renders every metric from one fresh read of the database. */
  scrape: () => Promise<string>;
}

export function createMetricsRegistry(db: Db, engine: Engine): MetricsRegistry {
  const registry = new Registry();
  let current: Promise<Stats> | null = null;
  const stats = () => (current ??= readStats(db, engine));

  new Counter({
    name: "once_idempotency_events_total",
    help: "Idempotency engine events per tenant (key scope), procedure and event: executed, replayed, conflicts, mismatches, released, busted, takeovers, store_errors (database unreachable), store_busy (no pool connection free in time), too_many_keys, fenced, bodies_omitted (an answer stored without its body: larger than IDEMPOTENCY_MAX_STORED_BODY_BYTES). Cluster-wide (from IdempotencyCounter).",
    labelNames: ["tenant", "procedure", "event"] as const,
    registers: [registry],
    async collect() {
      const s = await stats();
      this.reset();
      for (const row of s.counters) {
        for (const event of s.events)
          this.inc({ tenant: row.tenant, procedure: row.procedure, event }, row.counts[event]);
      }
    },
  });
  new Gauge({
    name: "once_idempotency_replay_cache_bytes",
    help: "What this instance's replay cache holds, in bytes (bounded by IDEMPOTENCY_REPLAY_CACHE_BYTES; answers over IDEMPOTENCY_MAX_STORED_BODY_BYTES are kept without their body: event bodies_omitted).",
    registers: [registry],
    collect() {
      this.set(engine.replayCacheUsage().bytes);
    },
  });
  new Gauge({
    name: "once_idempotency_replay_cache_entries",
    help: "Answers in this instance's replay cache (bounded by IDEMPOTENCY_REPLAY_CACHE_SIZE).",
    registers: [registry],
    collect() {
      this.set(engine.replayCacheUsage().entries);
    },
  });
  new Gauge({
    name: "once_idempotency_keys",
    help: "Idempotency keys stored, by status.",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const s = await stats();
      for (const [status, n] of Object.entries(s.keys.byStatus)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "once_idempotency_stuck_leases",
    help: "PROCESSING keys whose lease has expired (by the database's clock).",
    registers: [registry],
    async collect() {
      this.set((await stats()).keys.stuck);
    },
  });
  new Gauge({
    name: "once_idempotency_reaper_lag_seconds",
    help: "Age of the oldest idempotency key past its retention (0 when the reaper is caught up). Growing past a few reaper intervals means the key table grows without bound.",
    registers: [registry],
    async collect() {
      this.set((await stats()).reaper.lagSeconds);
    },
  });
  new Gauge({
    name: "once_outbox_messages",
    help: "Payment outbox messages, by status (DEAD = dead-lettered).",
    labelNames: ["status"] as const,
    registers: [registry],
    async collect() {
      const s = await stats();
      for (const [status, n] of Object.entries(s.outbox)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: "once_store_commits_synchronous",
    help: "1 when the key store's commits wait for a synchronous standby (an answer survives a failover), 0 when not (asynchronous, standby missing, or no standby): see docs/operations.md.",
    registers: [registry],
    async collect() {
      this.set((await stats()).replication.mode === ReplicationMode.SYNCHRONOUS ? 1 : 0);
    },
  });
  new Gauge({
    name: "once_store_synchronous_standbys",
    help: "Standbys whose confirmation the key store's commits wait for now (pg_stat_replication sync_state sync or quorum).",
    registers: [registry],
    async collect() {
      this.set(confirmingStandbys((await stats()).replication).length);
    },
  });
  new Gauge({
    name: "once_reconciliation_open_findings",
    help: "Reconciliation findings not yet resolved.",
    registers: [registry],
    async collect() {
      this.set((await stats()).openFindings);
    },
  });

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

const text = (status: number, body: string, headers: Record<string, string> = {}) =>
  new Response(body, {
    status,
    headers: { "content-type": "text/plain; charset=utf-8", ...headers },
  });

/**
 * The admin, by bearer token (Prometheus) or by the operator's session cookie (the dashboard's
 * browser): 401 with neither or with a bad one, 403 for a tenant. A cookie-authenticated GET is
 * safe to allow: it changes nothing, and another site cannot read the answer (no CORS headers).
 */
export async function handleMetricsRequest(
  app: { db: Db; metrics: MetricsRegistry; config: { demo: boolean } },
  req: Request,
): Promise<Response> {
  const { db } = app;
  const authorization = req.headers.get("authorization");
  if (authorization !== null && !/^Bearer\s+\S+$/i.test(authorization)) {
    return text(401, "Send Authorization: Bearer <admin token>\n", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  }
  let principal;
  try {
    principal = await principalFromHeaders(db, req.headers, { demo: app.config.demo });
  } catch (error) {
    logger.warn({ error }, "metrics: database unreachable");
    return text(503, "The database cannot be reached\n", { "retry-after": "1" });
  }
  if (!principal) {
    const error = authorization ? ', error="invalid_token"' : "";
    return text(
      401,
      authorization
        ? "Unknown token\n"
        : "Sign in as the operator, or send Authorization: Bearer <admin token>\n",
      {
        "www-authenticate": `Bearer realm="metrics"${error}`,
      },
    );
  }
  if (principal.role !== "ADMIN") return text(403, "Admins only\n");
  const m = app.metrics;
  try {
    return text(200, await m.scrape(), {
      "content-type": m.registry.contentType,
      "cache-control": "no-store",
    });
  } catch (error) {
    logger.warn({ error }, "metrics: scrape failed");
    return text(503, "The database cannot be reached\n", { "retry-after": "1" });
  }
}
