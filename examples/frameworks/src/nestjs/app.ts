// A NestJS app (on Express): a guard that authenticates the caller, and the existing controller's
// POST /orders. The lines marked `// idempotency` are all it took to protect it; the handler is
// unchanged. (Its constructor injects nothing: tsx does not emit decorator metadata.)
import "reflect-metadata";
import {
  Body,
  Controller,
  Get,
  HttpException,
  Injectable,
  Module,
  Post,
  Req,
  UnauthorizedException,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import type { Request } from "express";
import { Idempotent, idempotency } from "@once/idempotency/nestjs"; // idempotency
import { engine, prisma } from "../engine";
import { invalidOrder, receipt, UNREACHABLE_ITEM, type NewOrder } from "../orders";
import { tokenFor, userOf } from "../session-token";

type AuthenticatedRequest = Request & { user: { name: string } };

@Injectable()
class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const user = userOf(request.headers.authorization?.replace(/^Bearer /, "") ?? "");
    if (!user) throw new UnauthorizedException();
    request.user = { name: user };
    return true;
  }
}

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

@Module({ controllers: [OrdersController], providers: [BearerGuard] })
class AppModule {}

const app = await NestFactory.create(AppModule, { logger: ["error", "warn"] });
await app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1");
console.log(`listening on ${(app.getHttpServer().address() as { port: number }).port}`);
process.on("SIGTERM", () => void app.close().then(() => process.exit(0)));
