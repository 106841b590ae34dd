// A NestJS app (on Express): a guard that authenticates the caller (bearer-guard.ts), and the
// existing controller's POST /orders. The lines marked `// idempotency` are all it took to protect
// it; the handler is unchanged. (Its constructor injects nothing: tsx does not emit decorator
// metadata.)
import "reflect-metadata";
import { Body, Controller, Get, HttpException, Module, Post, Req, UseGuards } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { Idempotent, idempotency } from "@once/idempotency/nestjs"; // idempotency
import { engine, prisma } from "../engine";
import { invalidOrder, receipt, UNREACHABLE_ITEM, type NewOrder } from "../orders";
import { tokenFor } from "../session-token";
import { BearerGuard, type AuthenticatedRequest } from "./bearer-guard";
import { TxOrdersController } from "./tx-orders";

const scope = (req: AuthenticatedRequest) => req.user.name; // idempotency
const orders = idempotency({ engine, transaction: false, scope }); // idempotency

@Controller()
class OrdersController {
  @Post("login")
  login(@Body() body: { user: string }) {
    return { token: tokenFor(String(body.user)) };
  }

  @Post("orders")
  @UseGuards(BearerGuard)
  @Idempotent(orders) // idempotency
  async place(@Body() order: NewOrder, @Req() request: AuthenticatedRequest) {
    const invalid = invalidOrder(order);
    if (invalid) throw new HttpException({ error: invalid }, 400);
    if (order.item === UNREACHABLE_ITEM)
      throw new HttpException({ error: "the warehouse cannot be reached" }, 503);
    const placed = await prisma.order.create({
      data: { owner: request.user.name, item: order.item!, quantity: order.quantity! },
    });
    return receipt(placed);
  }

  @Get("orders")
  list() {
    return { orders: [] };
  }
}

// TxOrdersController: POST /tx-orders, a route written for the key's transaction (tx-orders.ts).
@Module({ controllers: [OrdersController, TxOrdersController], providers: [BearerGuard] })
class AppModule {}

const app = await NestFactory.create(AppModule, { logger: ["error", "warn"] });
await app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
console.log(`listening on ${(app.getHttpServer().address() as { port: number }).port}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
