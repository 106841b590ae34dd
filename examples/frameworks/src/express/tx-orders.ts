// POST /tx-orders on the Express app: a route written for the key's transaction (../tx-orders.ts).
// Its handler takes `tx` from the adapter's context; app.ts mounts this router after the body
// parser and the session, as the adapter wants.
import express from "express";
import { idempotency } from "@once/idempotency/express";
import { engine } from "../engine";
import { placeInTransaction, type TxOrder } from "../tx-orders";

const txOrders = idempotency({ engine, scope: (req: express.Request) => req.session.userId });

export const txOrderRoutes = express.Router();
txOrderRoutes.use("/tx-orders", txOrders);

txOrderRoutes.post("/tx-orders", async (req, res) => {
  const { tx } = txOrders.context(req);
  const { status, body } = await placeInTransaction(tx, req.session.userId!, req.body as TxOrder);
  res.status(status).json(body);
});

// The handler's error as a 500 of its own (Express's default would log its stack): a 5xx, so the
// key is released.
txOrderRoutes.use(
  (error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(500).json({ error: error.message });
  },
);
