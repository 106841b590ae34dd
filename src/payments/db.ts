// What payments works on, as types: the shop's Prisma client, its interactive transactions, and the
// idempotency engine the webhook's keys live in. The instances are handed in by whoever builds
// payments (the composition root, a script, a test); nothing here makes or imports one.
import type { IdempotencyEngine } from "@once/idempotency";
import type { Prisma, PrismaClient } from "../generated/prisma/client";

export type Db = PrismaClient;
export type Tx = Prisma.TransactionClient;
export type Engine = IdempotencyEngine<Tx>;
