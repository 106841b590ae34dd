// POST /tx-orders on the Fastify app: a route written for the key's transaction (../tx-orders.ts),
// in a context of its own (app.register) with the same JWT check as POST /orders. Its handler
// takes `tx` from the plugin's context; the error it throws is Fastify's 500, so the key is
// released.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { idempotency } from "@once/idempotency/fastify";
import { engine } from "../engine";
import { placeInTransaction, type TxOrder } from "../tx-orders";

export async function txOrderRoutes(app: FastifyInstance) {
  app.addHook("onRequest", (request) => request.jwtVerify());
  const txOrders = idempotency({ engine, scope: (request: FastifyRequest) => request.user.sub });
  await app.register(txOrders);

  app.post("/tx-orders", async (request, reply) => {
    const { tx } = txOrders.context(request);
    const order = request.body as TxOrder;
    const { status, body } = await placeInTransaction(tx, request.user.sub, order);
    return reply.code(status).send(body);
  });
}
