// What the person sees while the idempotency link works, and what the demo log records.
import type { IdempotencyEvent } from "@once/idempotency/client";

export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}

export function describeEvent(event: IdempotencyEvent): string {
  switch (event.type) {
    case "attempt":
      return event.attempt === 1
        ? "Placing your order…"
        : `Asking the shop again with the same key (attempt ${event.attempt})…`;
    case "retry":
      switch (event.reason) {
        case "network":
          return `The connection dropped before the answer arrived. Asking again in ${seconds(event.delayMs)} with the same key: this cannot place a second order.`;
        case "request_in_progress":
          return `The shop is still working on this order (409). Waiting ${seconds(event.delayMs)}, then asking for its answer.`;
        case "store_unavailable":
        case "store_busy":
        case "commit_unconfirmed":
        case "service_unavailable":
          return `The order system is unavailable (503). Trying again in ${seconds(event.delayMs)}.`;
      }
      return "Retrying…";
    case "answer":
      if (!event.ok)
        return `The shop answered ${event.status ?? "nothing"}${event.reason ? ` (${event.reason})` : ""}${event.replayed ? ", replayed" : ""}.`;
      return event.replayed
        ? "The shop answered with the order it had already placed for this key (replayed)."
        : "The shop placed the order.";
  }
}
