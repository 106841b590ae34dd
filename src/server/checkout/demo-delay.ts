// The demo's slow-processing knob: a pause inside placeOrder's transaction, so a double-submit or a
// retry lands while the first request still holds its key (and its stock rows).
import { setTimeout as sleep } from "node:timers/promises";

export const DEMO_DELAY_HEADER = "x-demo-delay-ms";

/**
 * 30 s at most: a request's lease is 30 s by default and its transaction times out at 60 s, so a
 * longer pause would only demonstrate a timeout. The header is honoured in demo mode only: in
 * production nobody may hold rows locked on request.
 */
export const MAX_DEMO_DELAY_MS = 30_000;

/** The pause this request asks for with the header, in demo mode; none otherwise. */
export function demoDelayMs(headers: Headers, config: { demo: boolean }): number {
  const asked = headers.get(DEMO_DELAY_HEADER);
  if (asked === null || !config.demo) return 0;
  const value = Number(asked);
  return Number.isInteger(value) && value >= 0 ? Math.min(value, MAX_DEMO_DELAY_MS) : 0;
}

export function pause(ms: number): Promise<void> {
  return ms > 0 ? sleep(ms) : Promise.resolve();
}
