// An Express 5 app: express.json(), express-session, and its existing POST /orders handler. The
// lines marked `// idempotency` are all it took to protect it; the handler is unchanged.
import express from "express";
import session from "express-session";
import { idempotency } from "@once/idempotency/express"; // idempotency
import { engine, prisma } from "../engine";
import { invalidOrder, receipt, UNREACHABLE_ITEM, type NewOrder } from "../orders";
import { txOrderRoutes } from "./tx-orders";

declare module "express-session" {
  interface SessionData {
    userId: string;
  }
}

const app = express();
app.use(express.json({ limit: "1mb" }));
app.use(session({ secret: "example-only-secret", resave: false, saveUninitialized: false }));

app.post("/login", (req, res) => {
  req.session.userId = String(req.body.user);
  res.status(204).end();
});

const scope = (req: express.Request) => req.session.userId; // idempotency
const orders = idempotency({ engine, transaction: false, scope }); // idempotency
app.use("/orders", orders); // idempotency

app.post("/orders", async (req, res) => {
  if (!req.session.userId) return void res.status(401).json({ error: "log in first" });
  const order = req.body as NewOrder;
  const invalid = invalidOrder(order);
  if (invalid) return void res.status(400).json({ error: invalid });
  if (order.item === UNREACHABLE_ITEM)
    return void res.status(503).json({ error: "the warehouse cannot be reached" });
  const placed = await prisma.order.create({
    data: { owner: req.session.userId, item: order.item!, quantity: order.quantity! },
  });
  res.status(201).location(`/orders/${placed.id}`).json(receipt(placed));
});

app.get("/orders", (_req, res) => {
  res.json({ orders: [] });
});

app.use(txOrderRoutes); // POST /tx-orders: a route written for the key's transaction (tx-orders.ts)

const server = app.listen(Number(process.env.PORT ?? 3000), () =>
  console.log(`listening on ${(server.address() as { port: number }).port}`),
);
process.on("SIGTERM", () => server.close(() => process.exit(0)));
