import { idempotent } from "@once/idempotency/http";
import { engine } from "../../../engine";

// POST /api/refunds with an Idempotency-Key refunds once, however often it is sent; every refusal
// is problem details.
export const POST = idempotent(
  async (request, { tx }) => {
    const { orderId, amountCents } = (await request.json()) as {
      orderId: string;
      amountCents: number;
    };
    return Response.json(
      await tx.order.update({
        where: { id: orderId },
        data: { refundedCents: { increment: amountCents } },
      }),
      { status: 201 },
    );
  },
  // Whose keys: whoever you authenticated (here the bearer token stands in for your session), never
  // the body.
  {
    engine,
    scope: (request) => request.headers.get("authorization") ?? new Response(null, { status: 401 }),
  },
);
