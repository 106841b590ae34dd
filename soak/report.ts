// The table the run prints (markdown, so the README can carry it as it is), with what was injected.
import type { CheckRow } from "./checker";
import type { SoakConfig } from "./config";
import type { Fault } from "./record";

export interface ReportInput {
  profile: string;
  config: SoakConfig;
  rows: CheckRow[];
  faults: Fault[];
  startedAt: Date;
  requests: number;
}

const MAX_OFFENDERS = 10;

export function renderReport(r: ReportInput): string {
  const c = r.config;
  const count = (kind: Fault["kind"]) => r.faults.filter((f) => f.kind === kind).length;
  const verdict = r.rows.every((row) => row.ok !== false) ? "**passed**" : "**FAILED**";
  const patroni = r.profile.startsWith("patroni");
  const database = patroni
    ? `, PostgreSQL 15 under Patroni (3 nodes, ${r.profile === "patroni" ? "synchronous_mode" : "asynchronous replication"}) behind HAProxy checking /primary, the payment worker in its own process, the provider's books on their own server`
    : r.profile === "pgbouncer"
      ? ", PgBouncer in transaction mode before PostgreSQL"
      : ", PostgreSQL directly";
  const databaseFaults = patroni
    ? `${r.faults
        .filter((f) => f.kind === "db" && !f.detail.startsWith("healthy"))
        .map((f) => `${f.detail} at ${Math.round(f.t / 1000)} s`)
        .join("; ")}; `
    : `${count("kill")} instance SIGKILLs (every ${Math.round(c.killEveryMs / 1000)} s), ${count("pg-restart")} PostgreSQL restart, ` +
      `${count("pg-stop")} PostgreSQL stop of ${Math.round(c.pgStopMs / 1000)} s, `;
  const lines = [
    `once soak — profile **${r.profile}** — ${r.startedAt.toISOString()} — ${verdict}`,
    "",
    `${c.instances} × \`next start\` behind HAProxy (retry-on conn-failure/empty-response/response-timeout, redispatch, ` +
      `server timeout ${c.haproxyServerTimeoutMs} ms)${database}; ` +
      `${c.clients} clients, ${Math.round(c.durationMs / 1000)} s under fire, ${r.requests} requests.`,
    `Injected: ${databaseFaults}provider failing ${pct(c.providerFailureRate)} and timing out after charging ${pct(c.providerTimeoutRate)}, ` +
      `${count("bust")} busts and ${count("release")} releases by the operator, ${pct(c.dropRate)} of answers dropped by the client, ` +
      `${pct(c.slowRate)} slow checkouts (${c.slowMs} ms), ${pct(c.resendRate)} of answered intents sent again later.`,
    "",
    "| check | result | expected | |",
    "|---|---|---|---|",
    ...r.rows.map((row) => `| ${row.label} | ${row.value} | ${row.expected} | ${row.ok === null ? "" : row.ok ? "ok" : "**VIOLATED**"} |`),
  ];
  const bad = r.rows.filter((row) => row.offenders.length > 0);
  for (const row of bad) {
    lines.push("", `**${row.label}**: ${row.offenders.length} offender(s)`);
    for (const o of row.offenders.slice(0, MAX_OFFENDERS)) lines.push(`- ${o}`);
    if (row.offenders.length > MAX_OFFENDERS) lines.push(`- … and ${row.offenders.length - MAX_OFFENDERS} more`);
  }
  return lines.join("\n") + "\n";
}

const pct = (share: number) => `${Math.round(share * 100)} %`;
