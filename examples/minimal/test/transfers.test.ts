// What the example adds on top of the kit: the second line of defence (a bust, then a retry, still
// one transfer), and the jobs that come with the engine.
import { randomUUID } from "node:crypto";
import { reapExpiredKeys } from "@once/idempotency/jobs";
import { describe, expect, it } from "vitest";
import { CALLERS, useApp } from "./support.js";

const t = useApp();

async function transfer(key: string, body: unknown) {
  const res = await fetch(`${t.app.url}/transfers.create`, {
    method: "POST",
    headers: { ...CALLERS[0], "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    replayed: res.headers.get("idempotent-replayed") === "true",
    text: await res.text(),
  };
}

describe("transfers.create", () => {
  it("after an operator busts the key, a retry runs again and answers with the same transfer", async () => {
    const key = randomUUID();
    const first = await transfer(key, { to: "carol", amountCents: 2500 });
    const id = (
      await t.app.prisma.idempotencyKey.findUniqueOrThrow({
        where: { scope_key: { scope: "alice", key } },
      })
    ).id;
    // With the key's scope, the bust's statements name it (one partition of a partitioned table).
    const busted = await t.app.prisma.$transaction((tx) =>
      t.app.engine.removeKey(tx, { id, scope: "alice" }, "bust"),
    );
    expect(busted.removed).toBe(true);
    const again = await transfer(key, { to: "carol", amountCents: 2500 });
    expect(again).toMatchObject({ status: 200, replayed: false });
    expect(JSON.parse(again.text).result.data.transfer.id).toBe(
      JSON.parse(first.text).result.data.transfer.id,
    );
    expect(await t.app.prisma.transfer.count({ where: { requestKey: key } })).toBe(1);
  });

  it("reaps keys past their retention with the engine's job", async () => {
    const key = randomUUID();
    await transfer(key, { to: "dave", amountCents: 300 });
    await t.app.prisma.idempotencyKey.updateMany({
      where: { key },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const reaped = await reapExpiredKeys(t.app.engine.run);
    expect(reaped.ran).toBe(true);
    expect(reaped.deleted).toBeGreaterThanOrEqual(1);
    expect(await t.app.prisma.idempotencyKey.count({ where: { key } })).toBe(0);
  });
});
