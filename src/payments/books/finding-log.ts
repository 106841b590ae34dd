// Every finding, whoever records it (reconciliation, the webhook, the outbox worker), is said in
// one structured log line, written here and nowhere else: its kind, subject and ids as fields, and
// a sentence for whoever reads the log as text. A finding is said when it is recorded, opened again
// or closed, never once per run that finds it still there.
import type { Finding } from "./finding";

export type FindingState = "new" | "reopened" | "closed";
export type FindingSource = "reconciliation" | "webhook" | "worker";

/** What the line is written to: the process's pino logger, or a test's. */
export interface FindingLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

type Said = Pick<Finding, "kind" | "dedupeKey" | "orderId" | "chargeIds"> & {
  subject?: string | null;
};

/** Nowhere: for the callers (tests, benches) that give no logger. */
const SILENT: FindingLogger = { warn() {}, info() {} };

const WHAT: Record<FindingState, string> = {
  new: "new finding",
  reopened: "finding open again",
  closed: "finding closed, the books agree again",
};

/** The finding as one sentence: its kind, what it names, and whether it is new, back or gone. */
export function findingLine(finding: Said, state: FindingState): string {
  const order = finding.orderId ? `order ${finding.orderId}` : "no order";
  const charges = finding.chargeIds.length ? `charge ${finding.chargeIds.join(", ")}` : "no charge";
  return `[reconciliation] ${WHAT[state]} ${finding.kind}: ${order}, ${charges} (dashboard: /admin)`;
}

/** The one line for a finding: a warning while it is open, information when it closes. */
export function logFinding(
  finding: Said,
  state: FindingState,
  source: FindingSource,
  log: FindingLogger = SILENT,
): void {
  const { kind, dedupeKey, subject, orderId, chargeIds } = finding;
  const fields = { finding: { kind, dedupeKey, subject, orderId, chargeIds }, state, source };
  const line = findingLine(finding, state) + (source === "reconciliation" ? "" : ` [${source}]`);
  if (state === "closed") log.info(fields, line);
  else log.warn(fields, line);
}
