// A concurrent duplicate (a double-click, a load balancer's re-send) arrives while the first
// request is running. How long after the first answer does the duplicate get its own? Without
// Prefer: wait it gets 409 and comes back after Retry-After, as the browser link does; with
// Prefer: wait the server holds it and answers once the first request commits (woken by NOTIFY).
import { setTimeout as pause } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import { percentile } from "../../tools/stats";

export interface Sent {
  status: number;
  retryAfterSeconds: number | undefined;
  preferenceApplied: string | null;
}

/** Sends the bench's effect mutation with `key`; `prefer` is the Prefer header, if any. */
export type Send = (
  key: string,
  input: { value: string; holdMs: number },
  prefer?: string,
) => Promise<Sent>;

/** Whether the first request holds `key` yet (its reservation is in the store). */
export type Held = (key: string) => Promise<boolean>;

/** How long the first request runs, and how far into it the duplicate is sent. */
const HOLD_MS = 150;
const DUPLICATE_AFTER_MS = 20;

/** The duplicate, as a client that honours Retry-After sends it until it gets a final answer. */
async function duplicate(
  send: Send,
  key: string,
  input: { value: string; holdMs: number },
  prefer?: string,
): Promise<Sent> {
  for (;;) {
    const answer = await send(key, input, prefer);
    if (answer.status !== 409) return answer;
    await pause((answer.retryAfterSeconds ?? 1) * 1000);
  }
}

/** Resolves once the first request holds `key`: on a starved machine the duplicate could win. */
async function whenHeld(held: Held, key: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await held(key))) {
    if (Date.now() > deadline) throw new Error("the first request never reserved its key");
  }
}

async function oneRound(send: Send, held: Held, prefer?: string): Promise<number> {
  const key = randomUUID();
  const input = { value: `dup-${key}`, holdMs: HOLD_MS };
  let firstAt = 0;
  let duplicateAt = 0;
  const first = send(key, input).then((answer) => {
    firstAt = performance.now();
    if (answer.status !== 200) throw new Error(`the first request answered ${answer.status}`);
  });
  await whenHeld(held, key);
  await pause(DUPLICATE_AFTER_MS);
  const second = duplicate(send, key, input, prefer).then((answer) => {
    duplicateAt = performance.now();
    if (answer.status !== 200) throw new Error(`the duplicate answered ${answer.status}`);
    if (prefer && !answer.preferenceApplied)
      throw new Error("the duplicate waited without Preference-Applied");
  });
  await Promise.all([first, second]);
  return duplicateAt - firstAt;
}

export interface DuplicateGaps {
  retryAfter: number[];
  preferWait: number[];
}

/** Rounds alternate between the two clients, so the machine's moods fall on both alike. */
export async function duplicateGaps(
  send: Send,
  held: Held,
  rounds: number,
): Promise<DuplicateGaps> {
  const gaps: DuplicateGaps = { retryAfter: [], preferWait: [] };
  for (let r = 0; r < rounds; r++) {
    gaps.retryAfter.push(await oneRound(send, held));
    gaps.preferWait.push(await oneRound(send, held, "wait=10"));
  }
  return gaps;
}

export function duplicateTable(gaps: DuplicateGaps): string {
  const stat = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return {
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      max: sorted[sorted.length - 1] ?? NaN,
    };
  };
  const before = stat(gaps.retryAfter);
  const after = stat(gaps.preferWait);
  const met = after.p50 <= 50 ? "met" : "missed";
  // Negative: the duplicate, woken by the commit's NOTIFY, was answered before the first request's
  // own answer reached its client.
  const sooner =
    after.p50 > 0
      ? `${(before.p50 / after.p50).toFixed(0)}× sooner`
      : "answered with the first, before the first's answer arrived";
  return [
    `| a concurrent duplicate's answer, after the first answer (first request runs ${HOLD_MS} ms; ${gaps.preferWait.length} rounds each) | p50 ms | p99 ms | max ms | goal |`,
    "|---|---:|---:|---:|---|",
    `| 409, then again after Retry-After (no Prefer) | ${before.p50.toFixed(1)} | ${before.p99.toFixed(1)} | ${before.max.toFixed(1)} | |`,
    `| Prefer: wait=10 (held by the server, woken by NOTIFY) | ${after.p50.toFixed(1)} | ${after.p99.toFixed(1)} | ${after.max.toFixed(1)} | p50 ≤ 50 ms: **${met}** (${sooner}) |`,
  ].join("\n");
}
