// The one verdict of a soak profile and of a run. The report's heading and closing line, the line
// the console ends with and the exit code are all read from it, so they cannot disagree (they did:
// a demonstration headed "passed" that exited 1, a run headed FAILED that ended "every promise
// held").
import { FOUND_BY_RECONCILIATION, LOST_ORDERS, passed, type CheckRow } from "./checker";
import { Profile } from "./soak-config";

export const VerdictKind = {
  /** An ordinary profile whose every check held. */
  PASSED: "passed",
  /** An ordinary profile with a violated check, or a demonstration that broke something else. */
  FAILED: "failed",
  /** The demonstration showed the loss and reconciliation found every lost order's charge. */
  DEMONSTRATED: "demonstrated",
  /** The demonstration lost nothing, or lost orders none of which had been charged. */
  DEMONSTRATED_NOTHING: "demonstrated_nothing",
  /** The demonstration lost charged orders and reconciliation missed some of their charges. */
  LOSS_NOT_FOUND: "loss_not_found",
} as const;
export type VerdictKind = (typeof VerdictKind)[keyof typeof VerdictKind];

export interface ProfileVerdict {
  profile: string;
  kind: VerdictKind;
  ok: boolean;
  /** What the report's first line ends with (bold in the report). */
  heading: string;
  /** One sentence: the report's closing line and the console's line for the profile. */
  sentence: string;
}

const HEADINGS: Record<VerdictKind, string> = {
  [VerdictKind.PASSED]: "passed",
  [VerdictKind.FAILED]: "FAILED",
  [VerdictKind.DEMONSTRATED]: "demonstrated: loss shown and found",
  [VerdictKind.DEMONSTRATED_NOTHING]: "FAILED: demonstrated nothing",
  [VerdictKind.LOSS_NOT_FOUND]: "FAILED: loss not found by reconciliation",
};

/**
 * The checks a lost order breaks by itself in the asynchronous demonstration: the order is gone
 * (lost), its intent has no order or a new one (orders per intent, the same order id), and its
 * charge has no order at the provider. Any other violated check fails the demonstration.
 */
export const BROKEN_BY_LOSS: readonly string[] = [
  LOST_ORDERS,
  "orders per intent",
  "the same order id in every answer of an intent",
  "charges without their order (the provider's books)",
];

function make(profile: string, kind: VerdictKind, sentence: string): ProfileVerdict {
  const ok = kind === VerdictKind.PASSED || kind === VerdictKind.DEMONSTRATED;
  return { profile, kind, ok, heading: HEADINGS[kind], sentence };
}

const violated = (rows: CheckRow[]) => rows.filter((r) => r.ok === false).map((r) => r.label);

/** A profile's verdict from its checks: the asynchronous profile is judged as a demonstration. */
export function judgeProfile(profile: string, rows: CheckRow[]): ProfileVerdict {
  if (profile === Profile.PATRONI_ASYNC) return judgeDemonstration(profile, rows);
  if (passed(rows)) return make(profile, VerdictKind.PASSED, "every promise held");
  const labels = violated(rows);
  return make(
    profile,
    VerdictKind.FAILED,
    `${labels.length} check(s) violated: ${labels.join("; ")}`,
  );
}

/**
 * The asynchronous profile exists to show what asynchronous replication loses. It demonstrates
 * something only when it shows the loss twice: orders answered 200 and gone (the checker), and
 * their charges, left at the provider, found by the app's own reconciliation. No loss, or lost
 * orders none of which had been charged ("found 0 of 0"), shows nothing; a missed charge is a
 * failure of reconciliation; any violation a loss does not explain is a failure as in any run.
 */
function judgeDemonstration(profile: string, rows: CheckRow[]): ProfileVerdict {
  const lost = rows.find((r) => r.label === LOST_ORDERS);
  const found = rows.find((r) => r.label === FOUND_BY_RECONCILIATION);
  const refusals = rows.find((r) => r.label === "refusals (503) under fire")?.value ?? "unknown";
  if (!lost || lost.ok !== false)
    return make(
      profile,
      VerdictKind.DEMONSTRATED_NOTHING,
      `the asynchronous profile showed no loss (refusals under fire: ${refusals}), so it demonstrated nothing: run it on a quieter machine`,
    );
  const charged = found?.tally?.whole ?? 0;
  const foundCount = found?.tally?.part ?? 0;
  if (charged === 0)
    return make(
      profile,
      VerdictKind.DEMONSTRATED_NOTHING,
      `the asynchronous profile lost ${lost.value} acknowledged orders, but none had been charged, so reconciliation had nothing to find: it demonstrated only half`,
    );
  if (foundCount < charged)
    return make(
      profile,
      VerdictKind.LOSS_NOT_FOUND,
      `the asynchronous profile lost ${lost.value} acknowledged orders, but reconciliation found only ${foundCount} of their ${charged} charges`,
    );
  const unexplained = violated(rows).filter((label) => !BROKEN_BY_LOSS.includes(label));
  if (unexplained.length > 0)
    return make(
      profile,
      VerdictKind.FAILED,
      `the asynchronous profile lost ${lost.value} acknowledged orders and reconciliation found their charges (${foundCount} of ${charged}), but it also broke what a loss does not explain: ${unexplained.join("; ")}`,
    );
  return make(
    profile,
    VerdictKind.DEMONSTRATED,
    `the asynchronous profile lost ${lost.value} acknowledged orders and reconciliation found their charges (${foundCount} of ${charged})`,
  );
}

/** A profile that broke (threw) before it could be judged. */
export function brokenProfile(profile: string, error: unknown): ProfileVerdict {
  const message = error instanceof Error ? error.message : String(error);
  return make(profile, VerdictKind.FAILED, `the profile broke before its verdict: ${message}`);
}

export interface RunVerdict {
  exitCode: 0 | 1;
  /** The console's last line. */
  closing: string;
}

/** The run's verdict: 0 only when every profile did what it is for. */
export function judgeRun(verdicts: readonly ProfileVerdict[]): RunVerdict {
  const failed = verdicts.filter((v) => !v.ok);
  if (verdicts.length === 0) return { exitCode: 1, closing: "FAILED: no profile ran" };
  if (failed.length > 0)
    return {
      exitCode: 1,
      closing: `FAILED: ${failed.map((v) => `${v.profile}: ${v.sentence}`).join(" | ")}`,
    };
  if (verdicts.every((v) => v.kind === VerdictKind.PASSED))
    return { exitCode: 0, closing: "every promise held" };
  return {
    exitCode: 0,
    closing: `every profile did what it is for: ${verdicts.map((v) => `${v.profile}: ${v.sentence}`).join(" | ")}`,
  };
}
