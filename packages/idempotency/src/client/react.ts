// `@once/idempotency/client/react`: one Idempotency-Key per intent for a React Query mutation, for
// both flavours of tRPC React:
//
//   const idempotency = useIdempotency();
//   api.post.create.useMutation({ trpc: idempotency.trpc })                     //
//   @trpc/react-query (T3) useMutation(trpc.post.create.mutationOptions({ trpc: idempotency.trpc
//   }))   // @trpc/tanstack-react-query
//
// The key travels in tRPC's operation context to `idempotencyLink`, which asks this hook's intent
// tracker for it (same input before a final answer: same key; see intent-keys.ts for the rule) and
// reports back what the answer was (`last`).
import { useMemo, useState } from "react";
import type { IdempotencyContext, IdempotencyEvent, IdempotencyInfo } from "./headers.js";
import { createIntentKeys, type IntentKeysOptions } from "./intent-keys.js";

export interface UseIdempotency {
  /** Spread into the mutation's options: `{ trpc: idempotency.trpc }`. */
  trpc: { context: IdempotencyContext };
  /** What the latest answer was (its key, whether it was replayed, when the key expires). */
  last: IdempotencyInfo | undefined;
}

/** Options are read once, on the first render (like `useState`'s initial value). */
export function useIdempotency(
  options?: Pick<IntentKeysOptions, "newKey" | "storage" | "storageKey">,
): UseIdempotency {
  const [intent] = useState(() => createIntentKeys(options));
  const [last, setLast] = useState<IdempotencyInfo>();
  const trpc = useMemo(() => {
    const onIdempotencyEvent = (event: IdempotencyEvent) => {
      if (event.type !== "answer") return;
      const { type: _type, ok: _ok, status: _status, reason: _reason, ...info } = event;
      setLast(info);
    };
    return { context: { idempotencyIntent: intent, onIdempotencyEvent } };
  }, [intent]);
  return { trpc, last };
}
