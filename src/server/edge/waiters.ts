// Duplicates of a request in flight on this instance wait for it here, before the line, without
// a place or a statement of their own: an identical request (same credential, procedure,
// Idempotency-Key and body bytes) sent with `Prefer: wait` sleeps on it and is then answered from
// the engine's replay cache. Queued in the line instead, a thousand duplicates of one slow checkout
// were 682 times refused 503 and each looked its caller and key up in the database. Anything else
// goes through the line.
//
// If the request in flight ends without its answer in memory, the first waiter goes through the
// line itself and the others wait on it: one runs fresh, never all. A waiter whose `Prefer: wait`
// runs out gets the engine's 409 request_in_progress. `Prefer: wait` buys patience, never a place.
import { parsePreferWait, preferenceApplied } from "@once/idempotency/http";
import { parseIdempotencyKey } from "@once/idempotency/operator";
import { Header } from "@once/idempotency/reasons";
import { describedByLink, Reason, reasonDocsPath } from "@/shared/reasons";
import type { Caller } from "../api/context";
import { clientGone } from "./admission";
import { keyScopeOf } from "../auth/principal";
import { readCookie, SESSION_COOKIE } from "../auth/session";

/** The most duplicates that wait on one request; the rest go through the line. */
export const WAITERS_PER_KEY = 2_000;

/** What a waiter is counted as besides its body: its Request, headers, timer and buffers. */
export const WAITER_OVERHEAD_BYTES = 4 * 1024;

/** What all waiters hold together: ~8 000 checkouts, 480 bodies at the 64 KiB limit. */
export const WAITERS_MAX_BYTES = 32 * 1024 * 1024;

/** What a request runs with: the caller its flight looked up (or will), shared by its duplicates. */
export interface Turn {
  caller?: Caller;
}

/** How the route serves a request, given its turn. */
export interface Runner {
  /** Through the line (a place among the requests in flight), then tRPC. */
  throughLine(req: Request, turn: Turn): Promise<Response>;
  /** tRPC without a place: the key's answer is in memory, so it costs no statement. */
  fromMemory(req: Request, turn: Turn): Promise<Response>;
}

export interface WaitersDeps {
  /** The caller named by a request's headers, looked up on first use (api/context.ts). */
  callerOf(headers: Headers): Caller;
  /** Whether the engine holds the key's settled answer in memory. */
  remembers(scope: string, key: string): boolean;
  /** The engine's lease and its shortest Retry-After: a waiter's 409 says what the engine's says. */
  leaseMs: number;
  minRetryAfterSeconds: number;
}

/** Who, what and which key: requests with the same head and body are one request. */
interface Head {
  id: string;
  key: string;
  /** The procedure, as tRPC reports it in an error's `data.path`. */
  path: string;
}

/** How a waiter's sleep ended. */
type Woke = "answered" | "promoted" | "deadline" | "gone";

interface Waiter {
  /** The flight it waits on now (a successor's, after a promotion). */
  flight: Flight;
  wake(woke: Woke): void;
}

/** A request in flight here, and the duplicates waiting on it. */
class Flight {
  readonly waiting: Waiter[] = [];
  readonly since = performance.now();
  constructor(
    readonly head: Head,
    readonly body: Uint8Array,
    readonly caller: Caller,
  ) {}
}

const TRPC_PREFIX = "/api/trpc/";

export class Waiters {
  private readonly flights = new Map<string, Flight>();
  private waiters = 0;
  private bytes = 0;

  constructor(
    private readonly deps: WaitersDeps,
    private readonly limits = { perKey: WAITERS_PER_KEY, maxBytes: WAITERS_MAX_BYTES },
  ) {}

  /** Requests waiting on another here now (metrics, tests). */
  get size(): number {
    return this.waiters;
  }

  /** Whether a request, its body unread, may wait here: the front door does not refuse it. */
  joinable(
    method: string | undefined,
    url: string,
    header: (name: string) => string | null | undefined,
  ): boolean {
    if (!((parsePreferWait(header("prefer")) ?? 0) > 0)) return false;
    const head = headOf(method, url, header);
    const flight = head && this.flights.get(head.id);
    return flight !== undefined && this.hasRoom(flight, Number(header("content-length")) || 0);
  }

  /** Serves `req` as a flight of its own, or as a duplicate waiting on the one in flight. */
  async serve(
    req: Request,
    body: () => Uint8Array | Promise<Uint8Array>,
    waitMs: number,
    run: Runner,
  ): Promise<Response> {
    const url = new URL(req.url);
    const head = headOf(req.method, url.pathname + url.search, (name) => req.headers.get(name));
    if (!head) return run.throughLine(req, {});
    const bytes = await body();
    const flight = this.flights.get(head.id);
    if (!flight)
      return this.fly(new Flight(head, bytes, this.deps.callerOf(req.headers)), req, run);
    if (waitMs > 0 && sameBytes(flight.body, bytes) && this.hasRoom(flight, bytes.byteLength))
      return this.wait(flight, req, waitMs, run);
    return run.throughLine(req, { caller: flight.caller });
  }

  private hasRoom(flight: Flight, bodyBytes: number): boolean {
    return (
      flight.waiting.length < this.limits.perKey &&
      this.bytes + bodyBytes + WAITER_OVERHEAD_BYTES <= this.limits.maxBytes
    );
  }

  /** Runs `req` through the line as `flight`'s request; its waiters are woken when it ends. */
  private async fly(flight: Flight, req: Request, run: Runner): Promise<Response> {
    this.flights.set(flight.head.id, flight);
    try {
      return await run.throughLine(req, { caller: flight.caller });
    } finally {
      this.land(flight);
    }
  }

  /** The flight ended: every waiter replays its answer, or the first flies and the rest wait. */
  private land(flight: Flight): void {
    const { id, key } = flight.head;
    if (this.flights.get(id) === flight) this.flights.delete(id);
    const [next, ...rest] = flight.waiting.splice(0);
    if (!next) return;
    const principal = flight.caller.knownPrincipal();
    if (principal && this.deps.remembers(keyScopeOf(principal), key)) {
      for (const waiter of [next, ...rest]) waiter.wake("answered");
      return;
    }
    const successor = new Flight(flight.head, flight.body, flight.caller);
    for (const waiter of rest) waiter.flight = successor;
    successor.waiting.push(...rest);
    this.flights.set(id, successor);
    next.flight = successor;
    next.wake("promoted");
  }

  /** Sleeps on `flight` (no place, no statement) for up to `waitMs`, then answers. */
  private async wait(flight: Flight, req: Request, waitMs: number, run: Runner): Promise<Response> {
    if (req.signal.aborted) return clientGone();
    const weight = flight.body.byteLength + WAITER_OVERHEAD_BYTES;
    const started = performance.now();
    this.waiters++;
    this.bytes += weight;
    let waiter!: Waiter;
    const leave = (woke: Woke) => {
      const at = waiter.flight.waiting.indexOf(waiter);
      if (at >= 0) waiter.flight.waiting.splice(at, 1);
      waiter.wake(woke);
    };
    const onAbort = () => leave("gone");
    const timer = setTimeout(() => leave("deadline"), waitMs);
    req.signal.addEventListener("abort", onAbort, { once: true });
    const woke = await new Promise<Woke>((resolve) => {
      waiter = { flight, wake: resolve };
      flight.waiting.push(waiter);
    });
    clearTimeout(timer);
    req.signal.removeEventListener("abort", onAbort);
    this.waiters--;
    this.bytes -= weight;
    return this.answer(woke, waiter.flight, req, run, {
      applied: Math.ceil(waitMs / 1000),
      leftMs: waitMs - (performance.now() - started),
    });
  }

  /** A waiter's answer, by how its sleep on `flight` (its flight now) ended. */
  private async answer(
    woke: Woke,
    flight: Flight,
    req: Request,
    run: Runner,
    wait: { applied: number; leftMs: number },
  ): Promise<Response> {
    const { applied } = wait;
    switch (woke) {
      case "answered":
        return withPreferenceApplied(await run.fromMemory(req, { caller: flight.caller }), applied);
      case "promoted": {
        const left = withPreferWait(req, flight.body, wait.leftMs);
        return withPreferenceApplied(await this.fly(flight, left, run), applied);
      }
      case "deadline":
        return stillInProgress(flight, this.retryAfter(flight), applied);
      case "gone":
        return clientGone();
    }
  }

  /** As the engine's 409 (decide.ts): soon, 2 s at most, never past the lease's end. */
  private retryAfter(flight: Flight): number {
    const leaseLeftMs = this.deps.leaseMs - (performance.now() - flight.since);
    return Math.max(this.deps.minRetryAfterSeconds, Math.min(Math.ceil(leaseLeftMs / 1000), 2));
  }
}

/**
 * The head of a tRPC mutation that can have duplicates: a POST of one procedure (not a batch)
 * with a valid Idempotency-Key and a credential; undefined for anything else.
 */
function headOf(
  method: string | undefined,
  url: string,
  header: (name: string) => string | null | undefined,
): Head | undefined {
  if (method !== "POST" || !url.startsWith(TRPC_PREFIX)) return undefined;
  const query = url.indexOf("?");
  if (query >= 0 && new URLSearchParams(url.slice(query)).has("batch")) return undefined;
  const parsed = parseIdempotencyKey(header("idempotency-key"));
  const credential = credentialOf(header);
  if (!parsed.ok || !credential) return undefined;
  const path = url.slice(TRPC_PREFIX.length, query < 0 ? undefined : query);
  return { id: `${credential}\n${path}\n${parsed.key}`, key: parsed.key, path };
}

/** What names the caller, as src/server/auth/principal.ts reads it: the bearer, else the cookie. */
function credentialOf(header: (name: string) => string | null | undefined): string | undefined {
  const authorization = header("authorization");
  if (authorization) return `authorization ${authorization}`;
  const session = readCookie(header("cookie") ?? null, SESSION_COOKIE);
  return session ? `session ${session}` : undefined;
}

/** `req` again, its `Prefer: wait` what is left of it: a promoted waiter waits no longer in all. */
function withPreferWait(req: Request, body: Uint8Array, leftMs: number): Request {
  const headers = new Headers(req.headers);
  headers.set(Header.PREFER, `wait=${Math.max(0, Math.floor(leftMs / 1000))}`);
  return new Request(req.url, {
    method: req.method,
    headers,
    body: body as BodyInit,
    signal: req.signal,
  });
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** The answer with `Preference-Applied`: the server waited, as the request asked. */
function withPreferenceApplied(res: Response, seconds: number): Response {
  res.headers.set(Header.PREFERENCE_APPLIED, preferenceApplied(seconds));
  return res;
}

/** The engine's 409 for a key still in progress, in tRPC's error shape (as api/trpc.ts formats it). */
function stillInProgress(flight: Flight, retryAfterSeconds: number, applied: number): Response {
  const reason = Reason.IN_PROGRESS;
  const data = {
    code: "CONFLICT",
    httpStatus: 409,
    path: flight.head.path,
    reason,
    docs: reasonDocsPath(reason),
  };
  const message = "A request with this Idempotency-Key is still in progress";
  return Response.json(
    { error: { message, code: -32009, data } },
    {
      status: 409,
      headers: {
        [Header.RETRY_AFTER]: String(retryAfterSeconds),
        [Header.PREFERENCE_APPLIED]: preferenceApplied(applied),
        Link: describedByLink(reason),
      },
    },
  );
}
