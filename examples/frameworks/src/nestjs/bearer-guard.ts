// The NestJS app's guard: the caller from the bearer token (../session-token.ts), put on the
// request as `req.user` for the routes it guards (and for their idempotency scope).
import {
  Injectable,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from "@nestjs/common";
import type { Request } from "express";
import { userOf } from "../session-token";

export type AuthenticatedRequest = Request & { user: { name: string } };

@Injectable()
export class BearerGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const user = userOf(request.headers.authorization?.replace(/^Bearer /, "") ?? "");
    if (!user) throw new UnauthorizedException();
    request.user = { name: user };
    return true;
  }
}
