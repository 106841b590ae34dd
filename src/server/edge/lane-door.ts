// A request the door hands to Next.js (pages, assets, health, metrics, the session forms; under
// `npm run dev` the API too): its body held under its lane's limit and deadline (node-body.ts), then a place in its
// lane (lanes.ts). Refusals are written here in the API's shape (`413`, `408`, `503`), and counted.
import type http from "node:http";
import { writeResponse } from "@once/idempotency/http";
import { Reason } from "@/shared/reasons";
import {
  BODY_READ_DEADLINE_MS,
  jsonPayloadTooLarge,
  jsonRequestTimeout,
} from "../../http/body-limit";
import { hasBody, holdBody, type HeldBody } from "./node-body";
import { bodyLimitOf, LANE_WAIT_MS, type LaneName, type Lanes } from "./lanes";
import { closeAfterLingering } from "./lingering-close";

export interface LaneDoor {
  lanes: Lanes;
  handle: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
  /** Headers every answer carries (next.config.js's), on the refusals written here. */
  headers: Readonly<Record<string, string>>;
  /** Told of each body refused here (reason, stage "body"). */
  onBodyRefused?: (reason: string) => void;
}

/** Stands for "Next.js answered it" where the lane's admission hands back a Response. */
const SERVED = new Response(null, { status: 204 });

/** Serves the request through its lane: call as it arrives, before any await (holdBody). */
export async function serveInLane(
  door: LaneDoor,
  lane: LaneName,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const withBody = hasBody(req);
  const held = withBody ? await holdBody(req, bodyLimitOf(lane), BODY_READ_DEADLINE_MS) : undefined;
  if (withBody && !held) {
    // The client left before its body was in: no one to answer, nothing done.
    res.destroy();
    return;
  }
  if (held && !held.ok) return refuseBody(door, held, req, res);
  const answer = await door.lanes.admit(
    lane,
    async () => {
      held?.release();
      await answered(door.handle(req, res), res);
      return SERVED;
    },
    goneSignal(res),
  );
  if (answer !== SERVED && !res.headersSent)
    await writeResponse(answer, res, { headers: door.headers });
}

/** `413` or `408` for a body refused before it was in; the connection lingers, then closes. */
async function refuseBody(
  door: LaneDoor,
  held: Exclude<HeldBody, { ok: true }>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const tooLarge = "limitBytes" in held;
  door.onBodyRefused?.(tooLarge ? Reason.PAYLOAD_TOO_LARGE : Reason.REQUEST_TIMEOUT);
  closeAfterLingering(req, res);
  const answer = tooLarge
    ? jsonPayloadTooLarge(held.limitBytes)
    : jsonRequestTimeout(held.timedOutMs);
  await writeResponse(answer, res, { headers: door.headers, close: true });
}

/**
 * How long a place stays taken after its client left mid-answer while Next.js has not settled: a
 * render for a gone client is still work, but Next.js never settles a cut static download.
 */
export const GONE_GRACE_MS = LANE_WAIT_MS;

/** Resolves once Next.js has answered (its handler done, the answer written), or given up on. */
async function answered(handled: Promise<void>, res: http.ServerResponse): Promise<void> {
  let settled = false;
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<void>((resolve) => {
    if (res.writableFinished || res.destroyed) resolve();
    res.once("finish", resolve);
    res.once("close", resolve);
  });
  const abandoned = new Promise<void>((resolve) => {
    const grace = () => {
      if (!settled) timer = setTimeout(resolve, GONE_GRACE_MS);
    };
    if (res.destroyed) grace();
    else res.once("close", grace);
  });
  try {
    await Promise.race([handled.finally(() => (settled = true)).then(() => ended), abandoned]);
  } finally {
    clearTimeout(timer);
  }
}

/** Fires when the client leaves before its answer is written: it leaves its lane's line. */
function goneSignal(res: http.ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
