// Sending one checkout intent: the key comes from the intent (src/trpc/checkout-intent.ts), the
// demo's trouble settings are taken for this order (and switch off), and every step the
// idempotency link reports is written to the demo log and shown as progress.
import type { useTRPCClient } from "@/trpc/react";
import { beginIntent, placeOrderInput, type CartLine } from "@/trpc/checkout-intent";
import type { IdempotencyEvent } from "@once/idempotency/client";
import { networkTrouble } from "@/trpc/network-trouble";
import { shortId } from "../format";
import { describeEvent, seconds } from "./events";

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
