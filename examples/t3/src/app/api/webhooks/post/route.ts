import { DeterministicError, withIdempotency } from "@once/idempotency";

import { engine } from "~/server/idempotency";

// Another system tells us about a post, perhaps more than once: its event id is the key.
export async function POST(req: Request) {
  const event = (await req.json()) as { id: string; name?: string };
  const result = await withIdempotency(
    engine,
    {
      scope: "webhook:posts",
      key: event.id,
      operation: "webhooks.post",
      request: event,
    },
    async (tx) => {
      if (!event.name) {
        // A refusal: stored, and replayed to every retry of this event.
        throw new DeterministicError(422, { reason: "name_missing" });
      }
      return tx.post.create({ data: { name: event.name } });
    }
  );
  return new Response(result.bodyText, {
    status: result.status,
    headers: { "content-type": "application/json" },
  });
}
