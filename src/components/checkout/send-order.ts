// Sending one checkout intent: the key comes from the intent (src/trpc/checkout-intent.ts), the
// demo's trouble settings are taken for this order (and switch off), and every step the
// idempotency link reports is written to the demo log and shown as progress, in the words below.
import type { useTRPCClient } from "@/trpc/react";
import { beginIntent, placeOrderInput, type CartLine } from "@/trpc/checkout-intent";
import type { IdempotencyEvent } from "@once/idempotency/client";
import { networkTrouble } from "@/trpc/network-trouble";
import { shortId } from "../format";

type Client = ReturnType<typeof useTRPCClient>;
type KeyValueStorage = Parameters<typeof beginIntent>[0];

export interface OrderAnswer {
  order: { id: string };
  replayed: boolean;
}

/** Every answer that arrived (one, or two for a double submit), or the first request's error. */
export type SendOutcome = { ok: true; answers: OrderAnswer[] } | { ok: false; error: unknown };

export async function sendOrder(
  client: Client,
  snapshot: { revision: string; lines: CartLine[] },
  intentStorage: KeyValueStorage,
  onProgress: (message: string) => void,
): Promise<SendOutcome> {
  const intent = beginIntent(intentStorage, snapshot.lines, snapshot.revision);
  const input = placeOrderInput(snapshot.lines);
  const { doubleSubmitNext, slowMs } = networkTrouble.takeForNextOrder();

  const send = (label: string) => {
    let replayed = false;
    const onIdempotencyEvent = (event: IdempotencyEvent) => {
      if (event.type === "answer") replayed = event.replayed;
      const text = describeEvent(event);
      networkTrouble.note(`${label}key ${shortId(event.key)}: ${text}`);
      if (event.type !== "answer") onProgress(text);
    };
    return client.checkout.placeOrder
      .mutate(input, {
        context: { idempotencyKey: intent.key, demoDelayMs: slowMs, onIdempotencyEvent },
      })
      .then((result): OrderAnswer => ({ order: result.order, replayed }));
  };

  if (slowMs > 0)
    networkTrouble.note(`Asked the server to take ${seconds(slowMs)} over this order.`);
  const requests = doubleSubmitNext ? [send("Request A, "), send("Request B, ")] : [send("")];
  if (doubleSubmitNext)
    networkTrouble.note("Sent the same order twice at once, with the same key.");
  const settled = await Promise.allSettled(requests);
  const answers = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  if (answers.length > 0) {
    const ids = new Set(answers.map((a) => a.order.id));
    if (ids.size > 1) networkTrouble.note(`Unexpected: ${ids.size} different orders for one key.`);
    return { ok: true, answers };
  }
  return { ok: false, error: (settled[0] as PromiseRejectedResult).reason };
}

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
