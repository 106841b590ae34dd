// Requests waiting for a key held by another request (Prefer: wait), by scope and key. They are
// woken by the LISTEN connection (evictions.ts) when a key settles anywhere: completed, failed,
// released or removed by an operator. Nothing polls: a waiter sleeps until woken or until its own
// deadline, then looks at the key once.
const SEP = "\u0000";

export type WakeReason = "settled" | "deadline" | "listener_lost";

export interface Waiter {
  /** Resolves when the key settles, the listener is lost, or `ms` pass, whichever comes first. */
  until(ms: number): Promise<WakeReason>;
  /** Leaves the registry (always call it, in a finally). */
  cancel(): void;
}

export class KeyWaiters {
  private readonly byKey = new Map<string, Set<(reason: WakeReason) => void>>();
  private connected = false;

  /** Whether a settled key can be heard now; waiting is only offered while it can. */
  get listening(): boolean {
    return this.connected;
  }

  /** How many requests are waiting (metrics, tests). */
  get size(): number {
    let n = 0;
    for (const set of this.byKey.values()) n += set.size;
    return n;
  }

  /** Lost: a settle may go unheard, so every waiter looks at its key now rather than sleep on. */
  setListening(listening: boolean): void {
    this.connected = listening;
    if (!listening) for (const id of [...this.byKey.keys()]) this.wakeId(id, "listener_lost");
  }

  /**
   * Registers before the caller's last read of the key: a settle between that read and the
   * registration would otherwise be missed, and the waiter would sleep to its deadline.
   */
  register(scope: string, key: string): Waiter {
    const id = scope + SEP + key;
    let wake: (reason: WakeReason) => void = () => {};
    let timer: NodeJS.Timeout | undefined;
    const woken = new Promise<WakeReason>((resolve) => (wake = resolve));
    let set = this.byKey.get(id);
    if (!set) this.byKey.set(id, (set = new Set()));
    set.add(wake);
    const cancel = () => {
      clearTimeout(timer);
      const current = this.byKey.get(id);
      current?.delete(wake);
      if (current?.size === 0) this.byKey.delete(id);
    };
    return {
      until: (ms) => {
        timer = setTimeout(() => wake("deadline"), Math.max(0, ms));
        return woken;
      },
      cancel,
    };
  }

  wake(scope: string, key: string): void {
    this.wakeId(scope + SEP + key, "settled");
  }

  private wakeId(id: string, reason: WakeReason): void {
    const set = this.byKey.get(id);
    if (!set) return;
    this.byKey.delete(id);
    for (const wake of set) wake(reason);
  }
}
