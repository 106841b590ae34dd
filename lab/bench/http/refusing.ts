// An instance whose every API request is refused at the front door, for the route costs to measure
// what a refusal costs the server. It runs as `npm start` runs it but with HTTP_MAX_IN_FLIGHT=1
// (one place, a queue of 25) and a long `Prefer: wait` allowed: one checkout paused for 30 s in
// its transaction (the demo's `x-demo-delay-ms`) holds the place, 26 reads that said they would
// wait a minute fill the queue, and from then on a request without `Prefer: wait` is refused
// before any work (src/server/edge/front-door.ts). The hold lasts as long as the paused checkout;
// `hold()` starts a new one when the last is older than HOLD_REFRESH_MS.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { MAX_DEMO_DELAY_MS } from "../../../src/server/checkout/demo-delay";
import { checkoutHeaders, orderBody } from "./scenarios";

/** The queue's length with one place (src/server/app.ts: 25 per place always let in), and one more. */
const FILLERS = 26;
/** A hold is trusted for half its life: a measured round takes a few seconds at most. */
const HOLD_REFRESH_MS = MAX_DEMO_DELAY_MS / 2;
/** A refusal at the door answers at once; a queued request only after the store's wait (2 s). */
const AT_ONCE_MS = 500;

/** The environment of the refusing instance. */
export const REFUSING_ENV = { HTTP_MAX_IN_FLIGHT: "1", IDEMPOTENCY_MAX_WAIT_MS: "60000" };

export class RefusingInstance {
  private heldAt = -Infinity;
  private pending: Promise<unknown>[] = [];

  constructor(
    private readonly port: number,
    private readonly productId: string,
  ) {}

  private get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Every place held and the queue full: the next API request without patience is refused. */
  async hold(): Promise<void> {
    if (performance.now() - this.heldAt < HOLD_REFRESH_MS) return;
    // The last hold's requests answered first, so the new one starts from an empty bound.
    await Promise.allSettled(this.pending);
    this.heldAt = performance.now();
    const holder = fetch(`${this.base}/api/trpc/checkout.placeOrder`, {
      method: "POST",
      headers: { ...checkoutHeaders(randomUUID()), "x-demo-delay-ms": String(MAX_DEMO_DELAY_MS) },
      body: orderBody(this.productId),
    });
    // The holder is in once a read has to queue (refused after the store's wait, not served).
    while ((await this.probe()).status === 200) await sleep(20);
    const fillers = Array.from({ length: FILLERS }, () =>
      fetch(`${this.base}/api/trpc/catalog.list`, { headers: { prefer: "wait=60" } }),
    );
    // Settled either way: the instance may stop with them still waiting.
    this.pending = [holder, ...fillers].map((p) =>
      p.then((r) => r.arrayBuffer()).catch(() => undefined),
    );
    for (;;) {
      const { status, ms } = await this.probe();
      if (status === 503 && ms < AT_ONCE_MS) return;
    }
  }

  private async probe(): Promise<{ status: number; ms: number }> {
    const started = performance.now();
    const answer = await fetch(`${this.base}/api/trpc/catalog.list`);
    await answer.arrayBuffer();
    return { status: answer.status, ms: performance.now() - started };
  }
}
