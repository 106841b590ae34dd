// Every route through a bound of its own (a lane), so that no route's crowd takes another's places:
// a flood of `GET /api/health` or of a page queues in its own short line and is refused from it,
// while the API's requests are served by the API's own admission (src/server/edge/admission.ts,
// the `api` lane here: the door adds nothing to it). A lane is the same admission as the API's,
// with a few places: past them a request queues for a place, first come first served, for up to
// LANE_WAIT_MS, then is refused `503` with its Retry-After (counted as
// once_http_refusals_total{reason="<lane>_busy",stage="lane"}). Queued, a flooding client waits
// instead of sending again, and costs the instance a timer, not a page render.
//
// The places are few, and a lane's time is bounded too (lane-budget.ts): a page render or a health
// check ran back to back by a queue that never empties would take the event loop whatever the
// number of places, so beyond a short burst a lane gets its share of the time. Each lane also has
// a body limit (body-limit.ts): 64 KiB where a body
// is expected (the API, the session forms, the webhook), PAGE_BODY_LIMIT_BYTES everywhere else.
import { Admission } from "./admission";
import { NEXT_REQUEST_MS, paced, TimeBudget } from "./lane-budget";
import {
  SIGN_IN_BODY_LIMIT_BYTES,
  TRPC_BODY_LIMIT_BYTES,
  WEBHOOK_BODY_LIMIT_BYTES,
} from "../../http/body-limit";

export type LaneName = "api" | "webhook" | "session" | "health" | "metrics" | "assets" | "pages";

/**
 * A page's body: no page of the app takes one (forms post to the API and the session routes), so
 * 4 KiB is room for a stray form, not for an upload.
 */
export const PAGE_BODY_LIMIT_BYTES = 4 * 1024;

/**
 * A lane is held to its share of the time only while more requests than this wait in its line
 * (more than a browser sends at once, a page and its prefetches: a crowd, not a visitor) and
 * another lane or the API has work.
 */
export const CROWD = 8;

/** How long a request queues for a place in its lane before it is refused (the store's wait). */
export const LANE_WAIT_MS = 2_000;

export interface LaneLimits {
  /** Requests of the lane in progress at once. */
  places: number;
  /** Requests that may queue for a place; past them a newcomer is refused at once. */
  queued: number;
  /** The largest body the lane takes. */
  bodyBytes: number;
  /**
   * The most of the instance's time the lane's requests may take together, beyond a short burst
   * (1: no bound; lane-budget.ts).
   */
  share: number;
  /** The burst (LANE_BURST_MS unless told: tests). */
  burstMs?: number;
  /** The least a request is counted (LANE_REQUEST_MS unless told: lane-budget.ts). */
  leastMs?: number;
}

/**
 * The lanes' bounds. A load balancer probes health one request at a time; metrics are scraped by
 * one Prometheus; a browser fetches a page's scripts and styles (assets) six at a time, and its
 * page one at a time. The queues hold a crowd the size of the instance's connections' worth.
 */
export const LANE_LIMITS: Readonly<Record<Exclude<LaneName, "api">, LaneLimits>> = {
  webhook: { places: 2, queued: 256, bodyBytes: WEBHOOK_BODY_LIMIT_BYTES, share: 0.1 },
  // The password hash runs off the event loop, on libuv's threads; the throttle bounds guessing.
  session: { places: 4, queued: 256, bodyBytes: SIGN_IN_BODY_LIMIT_BYTES, share: 1 },
  health: { places: 1, queued: 256, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 0.05 },
  metrics: { places: 1, queued: 16, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 0.05 },
  assets: { places: 4, queued: 256, bodyBytes: PAGE_BODY_LIMIT_BYTES, share: 0.1 },
  pages: {
    places: 2,
    queued: 256,
    bodyBytes: PAGE_BODY_LIMIT_BYTES,
    share: 0.1,
    leastMs: NEXT_REQUEST_MS,
  },
};

/** The lane of a request's path (its query left out). */
export function laneOf(url: string): LaneName {
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  if (path.startsWith("/api/trpc/")) return "api";
  if (path.startsWith("/api/webhooks/")) return "webhook";
  if (path.startsWith("/api/session/")) return "session";
  if (path === "/api/health") return "health";
  if (path === "/api/metrics") return "metrics";
  if (path.startsWith("/_next/static/") || path === "/favicon.ico" || path === "/icon.svg")
    return "assets";
  return "pages";
}

/** The largest body a request on this path may send. */
export function bodyLimitOf(lane: LaneName): number {
  return lane === "api" ? TRPC_BODY_LIMIT_BYTES : LANE_LIMITS[lane].bodyBytes;
}

/** Told of each refusal: the lane's name. */
export type OnLaneRefusal = (lane: LaneName) => void;

export interface LanesOptions {
  /** Told of each refusal: the lane's name. */
  onRefuse: OnLaneRefusal;
  /** Other bounds for some lanes (tests); LANE_LIMITS otherwise. */
  limits?: Partial<Record<LaneName, LaneLimits>>;
  /** false: every lane lets everything through (the body limits still hold). */
  bounded?: boolean;
  /** Whether the API has requests in progress or waiting (the app's admission). */
  apiBusy?: () => boolean;
}

/** One admission per lane but the API's (the app's own). */
export class Lanes {
  private readonly admissions = new Map<LaneName, Admission>();
  private readonly budgets = new Map<LaneName, TimeBudget>();
  private readonly apiBusy: () => boolean;

  constructor(options: LanesOptions) {
    this.apiBusy = options.apiBusy ?? (() => false);
    if (options.bounded === false) return;
    for (const [lane, defaults] of Object.entries(LANE_LIMITS) as [LaneName, LaneLimits][]) {
      const { places, queued, share, burstMs, leastMs } = options.limits?.[lane] ?? defaults;
      this.budgets.set(lane, new TimeBudget(share, burstMs, leastMs));
      this.admissions.set(
        lane,
        new Admission({
          served: places,
          waitMs: LANE_WAIT_MS,
          maxQueued: queued,
          onRefuse: () => options.onRefuse(lane),
        }),
      );
    }
  }

  /** `serve` run in the lane's bound, or the lane's refusal (`503`, Retry-After) if none came. */
  admit(lane: LaneName, serve: () => Promise<Response>, signal?: AbortSignal): Promise<Response> {
    const admission = this.admissions.get(lane);
    const budget = this.budgets.get(lane);
    if (!admission || !budget) return serve();
    const contended = () => admission.queued > CROWD && this.othersBusy(lane);
    return admission.admit(paced(budget, LANE_WAIT_MS, contended, serve), signal ? { signal } : {});
  }

  /**
   * Whether another lane (or the API) has requests in progress or waiting. A crowd alone in the
   * instance takes no one's time: held to its share then, a shop's pages would be served at a
   * tenth of what the instance can do while it has nothing else to do.
   */
  private othersBusy(lane: LaneName): boolean {
    if (this.apiBusy()) return true;
    for (const [other, admission] of this.admissions)
      if (other !== lane && (admission.size > 0 || admission.queued > 0)) return true;
    return false;
  }
}
