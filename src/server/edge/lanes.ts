// Every route but the API through a bound of its own (a lane), so no route's crowd takes another's
// places: a few places, a line of up to LANE_WAIT_MS, then `503` with Retry-After (counted as
// `<lane>_busy`, stage `lane`). The API's lane is the app's own admission. A lane's time is bounded
// too (lane-budget.ts): beyond a short burst a crowded lane gets its share of the event loop. Each
// lane has a body limit: 64 KiB where a body is expected, PAGE_BODY_LIMIT_BYTES elsewhere.
import { Admission } from "./admission";
import { NEXT_REQUEST_MS, paced, TimeBudget } from "./lane-budget";
import {
  SIGN_IN_BODY_LIMIT_BYTES,
  TRPC_BODY_LIMIT_BYTES,
  WEBHOOK_BODY_LIMIT_BYTES,
} from "../../http/body-limit";

export type LaneName = "api" | "webhook" | "session" | "health" | "metrics" | "assets" | "pages";

/** A page's body: no page takes one, so room for a stray form, not for an upload. */
export const PAGE_BODY_LIMIT_BYTES = 4 * 1024;

/** A lane is held to its share only while more than this wait (a crowd, not a browser). */
export const CROWD = 8;

/** How long a request queues for a place in its lane before it is refused (the store's wait). */
export const LANE_WAIT_MS = 2_000;

export interface LaneLimits {
  places: number;
  queued: number;
  bodyBytes: number;
  /** Of the instance's time, beyond a burst (1: no bound; lane-budget.ts). */
  share: number;
  burstMs?: number;
  leastMs?: number;
}

/** A balancer probes one at a time, one Prometheus scrapes, a browser fetches assets 6 at once. */
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

export function bodyLimitOf(lane: LaneName): number {
  return lane === "api" ? TRPC_BODY_LIMIT_BYTES : LANE_LIMITS[lane].bodyBytes;
}

export interface LanesOptions {
  onRefuse: (lane: LaneName) => void;
  /** Other bounds (tests). */
  limits?: Partial<Record<LaneName, LaneLimits>>;
  /** false: every lane lets everything through (the body limits still hold). */
  bounded?: boolean;
  apiBusy?: () => boolean;
}

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

  /** Another lane or the API has work: a crowd alone takes no one's time, so is not held back. */
  private othersBusy(lane: LaneName): boolean {
    if (this.apiBusy()) return true;
    for (const [other, admission] of this.admissions)
      if (other !== lane && (admission.size > 0 || admission.queued > 0)) return true;
    return false;
  }
}
