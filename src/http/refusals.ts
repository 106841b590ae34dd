// Every request this instance answered without doing its work, counted by why, so an operator sees
// them rather than infers them from latency: once_http_refusals_total{reason,stage} on
// /api/metrics and the dashboard. Per process, since start.
import { Reason } from "@/shared/reasons";

/** Where in a request's path it was refused. */
export const RefusalStage = {
  /** Past the bound of requests in flight, before any work (src/server/edge/admission.ts). */
  ADMISSION: "admission",
  /** Queued past the bound for its whole wait, and no place came (src/server/edge/admission.ts). */
  QUEUE: "queue",
  /** More connections from one peer address than the cap (src/server/edge/peer-connections.ts). */
  CONNECTION: "connection",
  /** Past a lane's bound at the front door: a page, health, a form (src/server/edge/lanes.ts). */
  LANE: "lane",
  /** By the key store: no pool connection within the store's wait, or the database unreachable. */
  STORE: "store",
  /** Its body: over the byte limit, or not in by the deadline (src/http/body-limit.ts). */
  BODY: "body",
} as const;
export type RefusalStage = (typeof RefusalStage)[keyof typeof RefusalStage];

/** The reasons counted as refusals when tRPC answers them (the store's). */
export const STORE_REFUSALS: ReadonlySet<string> = new Set([
  Reason.STORE_BUSY,
  Reason.STORE_UNAVAILABLE,
]);

export interface RefusalCount {
  reason: string;
  stage: RefusalStage;
  count: number;
}

export class Refusals {
  private readonly counts = new Map<string, RefusalCount>();

  count(reason: string, stage: RefusalStage): void {
    const id = `${stage}\u0000${reason}`;
    const entry = this.counts.get(id);
    if (entry) entry.count++;
    else this.counts.set(id, { reason, stage, count: 1 });
  }

  /** Every (reason, stage) refused so far, with its count. */
  snapshot(): RefusalCount[] {
    return [...this.counts.values()].map((entry) => ({ ...entry }));
  }
}
