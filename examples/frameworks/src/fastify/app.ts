// A Fastify 5 app: its own JSON parser, @fastify/jwt, and its existing POST /orders handler. The
// lines marked `// idempotency` are all it took to protect it; the handler is unchanged.
import fastifyJwt from "@fastify/jwt";
import Fastify from "fastify";
import type { FastifyRequest } from "fastify"; // idempotency
import { idempotency } from "@once/idempotency/fastify"; // idempotency
import { engine, prisma } from "../engine";
import { invalidOrder, receipt, UNREACHABLE_ITEM, type NewOrder } from "../orders";
import { txOrderRoutes } from "./tx-orders";

declare module "@fastify/jwt" {
  interface FastifyJWT {
    payload: { sub: string };
    user: { sub: string };
  }
}

const app = Fastify({ bodyLimit: 1024 * 1024 });
// The example's secret, as Express's session has its own: a real app reads it from its configuration.
await app.register(fastifyJwt, { secret: "example-only-secret" });

app.post("/login", async (request) => ({
  token: app.jwt.sign({ sub: String((request.body as { user: string }).user) }),
}));

await app.register(async (orders) => {
  orders.addHook("onRequest", (request) => request.jwtVerify());
  const scope = (request: FastifyRequest) => request.user.sub; // idempotency
  await orders.register(idempotency({ engine, transaction: false, scope })); // idempotency

  orders.post("/orders", async (request, reply) => {
    const order = request.body as NewOrder;
    const invalid = invalidOrder(order);
    if (invalid) return reply.code(400).send({ error: invalid });
    if (order.item === UNREACHABLE_ITEM)
      return reply.code(503).send({ error: "the warehouse cannot be reached" });
    const placed = await prisma.order.create({
      data: { owner: request.user.sub, item: order.item!, quantity: order.quantity! },
    });
    return reply.code(201).header("location", `/orders/${placed.id}`).send(receipt(placed));
  });

  orders.get("/orders", async () => ({ orders: [] }));
});
await app.register(txOrderRoutes); // POST /tx-orders: a route written for the key's transaction

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: "127.0.0.1" });
console.log(`listening on ${address}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
