// The in-memory model of the idempotency protocol (docs/design.md, "The protocol"): what a
// request must be answered, and what must be stored after it, given the key's state. Small on
// purpose: it is the specification the engine is run against.

export interface Request {
  key: string;
  /** Two inputs per key: "b" after "a" is a retry with another input. */
  variant: "a" | "b";
  mode: "ok" | "deterministic";
}

export type KeyState =
  | { status: "processing"; fp: string; leaseLive: boolean }
  | { status: "completed" | "failed"; fp: string; answer: { status: number; body: unknown } };

export interface Model {
  keys: Map<string, KeyState>;
  /** Committed business effects per key. */
  effects: Map<string, number>;
}

export interface Expected {
  status: number;
  replayed: boolean;
  /** The handler runs (and, if ok, commits its effect with the key). */
  executes: boolean;
}

const fpOf = (r: Request) => `${r.variant}:${r.mode}`;
const execute = (r: Request): Expected => ({
  status: r.mode === "ok" ? 200 : 412,
  replayed: false,
  executes: true,
});

export function expectedAnswer(m: Readonly<Model>, r: Request): Expected {
  const k = m.keys.get(r.key);
  if (!k) return execute(r);
  if (k.fp !== fpOf(r)) return { status: 422, replayed: false, executes: false };
  switch (k.status) {
    case "completed":
    case "failed":
      return { status: k.answer.status, replayed: true, executes: false };
    case "processing":
      return k.leaseLive ? { status: 409, replayed: false, executes: false } : execute(r); // take over
    default: {
      const unreachable: never = k;
      throw new Error(`unknown state ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * The model after `r`, given the body the engine answered when it executed (the effect's id is the
 * engine's).
 */
export function modelAfter(m: Readonly<Model>, r: Request, answer: { body: unknown }): Model {
  const next: Model = { keys: new Map(m.keys), effects: new Map(m.effects) };
  const e = expectedAnswer(m, r);
  if (!e.executes) return next;
  if (r.mode === "ok") {
    next.effects.set(r.key, (next.effects.get(r.key) ?? 0) + 1);
    next.keys.set(r.key, {
      status: "completed",
      fp: fpOf(r),
      answer: { status: 200, body: answer.body },
    });
  } else {
    // A deterministic failure rolls its effect back and is stored, to be replayed.
    next.keys.set(r.key, {
      status: "failed",
      fp: fpOf(r),
      answer: { status: 412, body: answer.body },
    });
  }
  return next;
}
