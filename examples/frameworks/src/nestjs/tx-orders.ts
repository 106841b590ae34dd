// POST /tx-orders on the NestJS app: a route written for the key's transaction (../tx-orders.ts),
// beside the existing controller. Its handler takes `tx` from the interceptor's context.
import { Body, Controller, HttpException, Post, Req, UseGuards } from "@nestjs/common";
import { Idempotent, idempotency } from "@once/idempotency/nestjs";
import { engine } from "../engine";
import { placeInTransaction, type TxOrder } from "../tx-orders";
import { BearerGuard, type AuthenticatedRequest } from "./bearer-guard";

const txOrders = idempotency({ engine, scope: (req: AuthenticatedRequest) => req.user.name });

@Controller()
export class TxOrdersController {
  @Post("tx-orders")
  @UseGuards(BearerGuard)
  @Idempotent(txOrders)
  async place(@Body() order: TxOrder, @Req() request: AuthenticatedRequest) {
    const { tx } = txOrders.context(request);
    // The handler's error as a 500 of its own (Nest would log its stack): a 5xx, so the key is
    // released.
    const { status, body } = await placeInTransaction(tx, request.user.name, order).catch(
      (error: Error) => {
        throw new HttpException({ error: error.message }, 500);
      },
    );
    if (status !== 201) throw new HttpException(body, status);
    return body;
  }
}
