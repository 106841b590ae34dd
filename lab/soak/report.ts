// The table the run prints (markdown, so the README can carry it as it is), with what was injected.
import type { CheckRow } from "./checker";
import type { SoakConfig } from "./config";
import type { Fault, RequestSample } from "./record";
import type { ProfileVerdict } from "./verdict";

export interface ReportInput {
  profile: string;
  config: SoakConfig;
  rows: CheckRow[];
  /** The profile's one verdict: the heading and the closing line say it. */
  verdict: ProfileVerdict;
  faults: Fault[];
  startedAt: Date;
  requests: number;
  /** Every request, for the outage each database fault caused (the patroni profiles). */
  samples?: RequestSample[];
  /** once_store_commits_synchronous as /api/metrics said it after start-up. */
  synchronousGauge?: string;
}

const MAX_OFFENDERS = 10;

export function renderReport(r: ReportInput): string {
  const c = r.config;
  const count = (kind: Fault["kind"]) => r.faults.filter((f) => f.kind === kind).length;
  const patroni = r.profile.startsWith("patroni");
  const database = patroni
    ? `, PostgreSQL 15 under Patroni (3 nodes, ${r.profile === "patroni" ? "synchronous_mode" : "asynchronous replication"}) behind HAProxy checking /primary, the payment worker in its own process, the provider's books on their own server`
    : r.profile === "pgbouncer"
      ? ", PgBouncer in transaction mode before PostgreSQL"
      : ", PostgreSQL directly";
  const databaseFaults = patroni
    ? `${r.faults
        .filter((f) => f.kind === "db" && !f.detail.startsWith("healthy"))
        .map((f) => `${f.detail} at ${Math.round(f.t / 1000)} s${outageNote(f, r.samples ?? [])}`)
        .join("; ")}; `
    : `${count("kill")} instance SIGKILLs (every ${Math.round(c.killEveryMs / 1000)} s), ${count("pg-restart")} PostgreSQL restart, ` +
      `${count("pg-stop")} PostgreSQL stop of ${Math.round(c.pgStopMs / 1000)} s, `;
  const lines = [
    `once soak — profile **${r.profile}** — ${r.startedAt.toISOString()} — **${r.verdict.heading}**`,
    "",
    `${c.instances} × \`next start\` behind HAProxy (retry-on conn-failure/empty-response/response-timeout, redispatch, ` +
      `server timeout ${c.haproxyServerTimeoutMs} ms)${database}; ` +
      `${c.clients} clients, ${Math.round(c.durationMs / 1000)} s under fire, ${r.requests} requests.`,
    `Injected: ${databaseFaults}provider failing ${pct(c.providerFailureRate)} and timing out after charging ${pct(c.providerTimeoutRate)}, ` +
      `${count("bust")} busts and ${count("release")} releases by the operator, ${pct(c.dropRate)} of answers dropped by the client, ` +
      `${pct(c.slowRate)} slow checkouts (${c.slowMs} ms), ${pct(c.resendRate)} of answered intents sent again later.`,
    ...(r.synchronousGauge !== undefined
      ? [
          `The operator's view at start: \`once_store_commits_synchronous ${r.synchronousGauge}\` in /api/metrics.`,
        ]
      : []),
    "",
    "| check | result | expected | |",
    "|---|---|---|---|",
    ...r.rows.map(
      (row) =>
        `| ${row.label} | ${row.value} | ${row.expected} | ${row.ok === null ? "" : row.ok ? "ok" : "**VIOLATED**"} |`,
    ),
  ];
  const bad = r.rows.filter((row) => row.offenders.length > 0);
  for (const row of bad) {
    lines.push("", `**${row.label}**: ${row.offenders.length} offender(s)`);
    for (const o of row.offenders.slice(0, MAX_OFFENDERS)) lines.push(`- ${o}`);
    if (row.offenders.length > MAX_OFFENDERS)
      lines.push(`- … and ${row.offenders.length - MAX_OFFENDERS} more`);
  }
  lines.push("", `**Verdict:** ${r.verdict.sentence}.`);
  return lines.join("\n") + "\n";
}

/**
 * What clients saw of a database fault: the gap between the last answer 200 that arrived before it
 * and the first that arrived after it (the time in between answered 503 or 409, or not at all).
 */
function outageNote(fault: Fault, samples: RequestSample[]): string {
  if (!/^(switchover|kill|node lost|stall:)/.test(fault.detail)) return "";
  const ok = samples.filter((s) => s.seen === 200).map((s) => s.t + s.ms);
  const before = Math.max(...ok.filter((t) => t <= fault.t), 0);
  const after = Math.min(...ok.filter((t) => t > fault.t));
  return Number.isFinite(after) ? ` (no 200 for ${((after - before) / 1000).toFixed(1)} s)` : "";
}

const pct = (share: number) => `${Math.round(share * 100)} %`;
