// The "network trouble" panel's switches (demo only): a tiny store the checkout page and the
// panel share, and the `fetch` the browser's tRPC client uses so that "drop the next response"
// really loses an answer the server already gave. Every switch is one-shot (the next order, then
// off), so the panel never leaves a demo half-armed and an ordinary checkout shows the ordinary path.

/** The server pauses this long inside a checkout (demo mode only; server/checkout/demo-delay.ts). */
const DEMO_DELAY_HEADER = "x-demo-delay-ms";

/** The header for a mutation whose context asked for a slow checkout (`{ demoDelayMs }`). */
export function demoDelayHeaders(op: {
  type: string;
  context: { demoDelayMs?: number };
}): Record<string, string> {
  const ms = op.type === "mutation" ? op.context.demoDelayMs : undefined;
  return ms && ms > 0 ? { [DEMO_DELAY_HEADER]: String(Math.round(ms)) } : {};
}

interface NetworkTrouble {
  /** The next mutation's response is thrown away after the server answered. */
  dropNextResponse: boolean;
  /** The next checkout is sent twice at once (two requests, same key). */
  doubleSubmitNext: boolean;
  /** Ask the server (demo mode) to pause this long inside each checkout. 0 = off. */
  slowMs: number;
}

interface TroubleLogEntry {
  id: number;
  at: number;
  text: string;
}

const initial: NetworkTrouble = { dropNextResponse: false, doubleSubmitNext: false, slowMs: 0 };
let state: NetworkTrouble = initial;
let log: TroubleLogEntry[] = [];
/** The server renders an empty log; one constant array, so React sees a stable snapshot. */
const EMPTY_LOG: TroubleLogEntry[] = [];
let nextLogId = 1;
const listeners = new Set<() => void>();

function emit() {
  for (const listener of listeners) listener();
}

export const networkTrouble = {
  get: (): NetworkTrouble => state,
  getServerSnapshot: (): NetworkTrouble => initial,
  set(patch: Partial<NetworkTrouble>) {
    state = { ...state, ...patch };
    emit();
  },
  subscribe(listener: () => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  /** The settings for the order about to be sent; the order-level ones are switched off. */
  takeForNextOrder(): Pick<NetworkTrouble, "doubleSubmitNext" | "slowMs"> {
    const { doubleSubmitNext, slowMs } = state;
    if (doubleSubmitNext || slowMs > 0) networkTrouble.set({ doubleSubmitNext: false, slowMs: 0 });
    return { doubleSubmitNext, slowMs };
  },
  log: (): TroubleLogEntry[] => log,
  serverLog: (): TroubleLogEntry[] => EMPTY_LOG,
  note(text: string) {
    log = [{ id: nextLogId++, at: Date.now(), text }, ...log].slice(0, 30);
    emit();
  },
  clearLog() {
    log = [];
    emit();
  },
};

/**
 * `fetch` for the tRPC client. When "drop the next response" is on, the next mutation (a POST) goes
 * to the server, the whole answer is read, and then the browser pretends the connection died: the
 * server executed the request, the page never hears about it, and the idempotency link retries.
 */
export const troubleFetch: typeof fetch = async (input, init) => {
  const isMutation = (init?.method ?? "GET").toUpperCase() === "POST";
  if (!isMutation || !state.dropNextResponse) return fetch(input, init);
  networkTrouble.set({ dropNextResponse: false });
  const response = await fetch(input, init);
  await response.arrayBuffer(); // the server has answered in full
  networkTrouble.note(
    `Dropped the server's ${response.status} answer on the way back (the server did the work).`,
  );
  throw new TypeError("Network trouble: the response was lost on the way back");
};
