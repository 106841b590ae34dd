// An order is found by its id through the primary key's index, and only by the text PostgreSQL
// prints for it (as when the id was compared as text): another spelling of it names no order.
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { Prisma } from "../generated/prisma/client";
import { applyPaymentOutcome, orderById } from "./order-payment";

const t = useTestDatabase();

/** What the provider reports it took: by default the test order's own 1.00 EUR. */
const taken = (id: string, amountCents = 100, currency = "EUR") => ({ id, amountCents, currency });

async function pendingOrder(): Promise<string> {
  const [user] = await t.db.$queryRaw<
    { id: string; tenantId: string }[]
  >`SELECT "id", "tenantId" FROM "User" WHERE "tenantId" IS NOT NULL LIMIT 1`;
  const key = randomUUID();
  const [order] = await t.db.$queryRaw<{ id: string }[]>`
    INSERT INTO "Order" ("tenantId", "userId", "totalCents", "currency", "idempotencyKey", "intentKey")
    VALUES (${user!.tenantId}, ${user!.id}, 100, 'EUR', ${key}, ${key}) RETURNING "id"::text AS "id"`;
  return order!.id;
}

describe("applyPaymentOutcome", () => {
  it("moves the order its reference names, once", async () => {
    const id = await pendingOrder();
    expect(
      await t.db.$transaction((tx) => applyPaymentOutcome(tx, id, "PAID", taken("ch_1"))),
    ).toEqual({
      status: "PAID",
      changed: true,
    });
    expect(
      await t.db.$transaction((tx) => applyPaymentOutcome(tx, id, "PAYMENT_FAILED", taken("ch_2"))),
    ).toEqual({ status: "PAID", changed: false });
  });

  it("is not moved by a charge of another amount or currency, which becomes a finding", async () => {
    const id = await pendingOrder();
    for (const charge of [taken("ch_cent", 1), taken("ch_usd", 100, "USD")]) {
      expect(await t.db.$transaction((tx) => applyPaymentOutcome(tx, id, "PAID", charge))).toEqual({
        status: "PENDING",
        changed: false,
        mismatch: true,
      });
      // Recorded once, however often the charge is reported.
      await t.db.$transaction((tx) => applyPaymentOutcome(tx, id, "PAID", charge));
    }
    const findings = await t.db.reconciliationFinding.findMany({
      where: { orderId: id },
      orderBy: { dedupeKey: "asc" },
    });
    expect(findings.map((f) => [f.kind, f.chargeIds])).toEqual([
      ["AMOUNT_MISMATCH", ["ch_cent"]],
      ["AMOUNT_MISMATCH", ["ch_usd"]],
    ]);
    // The charge of its own total still pays it.
    expect(
      await t.db.$transaction((tx) => applyPaymentOutcome(tx, id, "PAID", taken("ch_own"))),
    ).toEqual({ status: "PAID", changed: true });
  });

  it("finds no order for another spelling of its id, nor for a reference that is no uuid", async () => {
    const id = await pendingOrder();
    for (const reference of [
      id.toUpperCase(),
      `{${id}}`,
      id.replaceAll("-", ""),
      "not-an-order",
      "",
    ]) {
      expect(
        await t.db.$transaction((tx) => applyPaymentOutcome(tx, reference, "PAID", taken("ch_x"))),
        reference,
      ).toEqual({ status: null, changed: false });
    }
    const [order] = await t.db.$queryRaw<
      { status: string }[]
    >`SELECT "status"::text AS "status" FROM "Order" WHERE "id" = ${id}::uuid`;
    expect(order!.status).toBe("PENDING");
  });

  it("reads the order through the primary key, not every order", async () => {
    const id = await pendingOrder();
    // Sequential scans priced out: a condition the index cannot serve still gets one.
    const plan = await t.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL enable_seqscan = off");
      return tx.$queryRaw<{ "QUERY PLAN": string }[]>(
        Prisma.sql`EXPLAIN SELECT 1 FROM "Order" AS o WHERE ${orderById(Prisma.sql`${id}`)}`,
      );
    });
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(
      /Index (Only )?Scan using "Order_pkey"/,
    );
  });
});
