// The four ways the bench calls the checkout, all with the same body, auth and client work (every
// request is built by setupRequest, so no path gets a cheaper client):
//   control     benchControl.placeOrder: the same business transaction, no idempotency engine
//               (control-route.ts: the lab's, served by the front door beside the app's)
//   new keys    checkout.placeOrder with a fresh Idempotency-Key per request
//   replays     checkout.placeOrder with one key that has already completed
//   duplicates  checkout.placeOrder where each key is sent by as many requests as there are
//               connections, back to back (so they race): one executes, the others get 409
//               request_in_progress or the replay
//   floor       new keys against the checkout written by hand on node:http and pg (floor-server.ts)
//   baseline    new keys against another checkout's production build on the same database
//               (`--baseline DIR`, e.g. a clone of 847af77): before and after in one run
//   paired      new keys against a second instance of this build, started and warmed as the
//               baseline's is: what the baseline is compared with (an instance that also serves
//               the other paths and the webhooks, as the first does, serves more checkouts a
//               second than a fresh one of the same build: measured 1.0–2.8× in an A/A run)
import { randomUUID } from "node:crypto";
import type { AutocannonRequest } from "autocannon";

export const SCENARIOS = [
  "control",
  "new keys",
  "replays",
  "duplicates",
  "floor",
  "baseline",
  "paired",
] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** Statuses each scenario answers by contract; anything else counts as an error. */
export const EXPECTED_STATUSES: Record<Scenario, readonly number[]> = {
  control: [200],
  "new keys": [200],
  replays: [200],
  duplicates: [200, 409],
  floor: [200],
  baseline: [200],
  paired: [200],
};

export const PROTECTED_PATH = "/api/trpc/checkout.placeOrder";
/** The control's procedure (control-route.ts serves it). */
export const CONTROL_PROCEDURE = "benchControl.placeOrder";
const CONTROL_PATH = `/api/trpc/${CONTROL_PROCEDURE}`;
export const TOKEN = "acme_demo_token";

export function orderBody(productId: string): string {
  return JSON.stringify({ items: [{ productId, quantity: 1 }] });
}

/** A protected checkout's headers: the bench's tenant token and the key. */
export function checkoutHeaders(key: string): Record<string, string> {
  return {
    authorization: `Bearer ${TOKEN}`,
    "content-type": "application/json",
    "idempotency-key": key,
  };
}

/** The request list autocannon sends for `scenario` with `connections` connections. */
export function requestsFor(
  scenario: Scenario,
  productId: string,
  connections: number,
  replayKey: string,
): AutocannonRequest[] {
  const body = orderBody(productId);
  const run = randomUUID();
  let sent = 0;
  const keyOf: Record<Scenario, () => string> = {
    control: () => randomUUID(),
    "new keys": () => randomUUID(),
    floor: () => randomUUID(),
    baseline: () => randomUUID(),
    paired: () => randomUUID(),
    replays: () => replayKey,
    // The n-th group of `connections` consecutive requests shares one key.
    duplicates: () => `dup-${run}-${Math.floor(sent++ / connections)}`,
  };
  const path = scenario === "control" ? CONTROL_PATH : PROTECTED_PATH;
  return [
    {
      method: "POST",
      path,
      body,
      setupRequest: (request) => ({ ...request, headers: checkoutHeaders(keyOf[scenario]()) }),
    },
  ];
}

/** Completes `key` once, so the replay scenario replays it. */
export async function completeKey(baseUrl: string, productId: string, key: string): Promise<void> {
  const res = await fetch(baseUrl + PROTECTED_PATH, {
    method: "POST",
    headers: checkoutHeaders(key),
    body: orderBody(productId),
  });
  if (res.status !== 200)
    throw new Error(`could not complete the replay key: ${res.status} ${await res.text()}`);
}

/** Fails with a clear message when the server has no control procedure (an older build). */
export async function assertControlServed(baseUrl: string, productId: string): Promise<void> {
  const res = await fetch(baseUrl + CONTROL_PATH, {
    method: "POST",
    headers: checkoutHeaders(randomUUID()),
    body: orderBody(productId),
  });
  if (res.status === 404)
    throw new Error(
      `the server does not serve ${CONTROL_PROCEDURE}: it was started without ONCE_LAB_ROUTES naming lab/bench/http/control-route.ts, or not by scripts/front-door.ts`,
    );
  if (res.status !== 200)
    throw new Error(`the control procedure answered ${res.status}: ${await res.text()}`);
}
