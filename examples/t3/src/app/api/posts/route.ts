import { idempotent } from "@once/idempotency/http";

import { anonymousIdOf } from "~/server/anonymous-id";
import { engine } from "~/server/idempotency";

// A plain Route Handler, no tRPC: POST /api/posts with an Idempotency-Key
// makes one post, however often it is sent; refusals are problem details.
export const POST = idempotent(
  async (request, { tx }) => {
    const { name } = (await request.json()) as { name?: string };
    if (!name) return Response.json({ error: "name missing" }, { status: 400 });
    const post = await tx.post.create({ data: { name } });
    return Response.json(post, { status: 201 });
  },
  {
    engine,
    // Whose keys: the browser's anonymous id (a signed-in app: the user).
    scope: (request) =>
      anonymousIdOf(request.headers) ?? new Response(null, { status: 401 }),
  }
);
