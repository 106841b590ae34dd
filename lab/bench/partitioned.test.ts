// The key table hash-partitioned by scope, as bench:capacity builds it (partitioned.ts) and
// docs/scale.md recommends past one table. An operator's bust or release that names the key's
// scope reads one partition; by id alone it reads all of them. Every statement the operator sends
// is first EXPLAINed, with its own parameters, on the real partitioned table, and then run.
import { describe, expect, it, beforeAll } from "vitest";
import { KeyRemoval, removeKey, type KeyTarget } from "@once/idempotency/operator";
import { poolOf } from "@/server/db/client";
import type { Tx } from "@/server/db/client";
import { insertKey } from "@/test/admin-factory";
import { useTestDatabase } from "@/test/database";
import { PARTITIONED_SQL, PARTITIONS } from "./partitioned";

const t = useTestDatabase();

beforeAll(async () => {
  // Several statements in one: the simple protocol, which pg uses for a query without parameters.
  await poolOf(t.db)!.query(PARTITIONED_SQL);
});

/** The partitions each statement's plan reads, in the order the statements were sent. */
async function partitionsRead(
  target: KeyTarget,
  mode: KeyRemoval,
): Promise<{ removed: boolean; reads: number[] }> {
  const reads: number[] = [];
  const result = await t.db.$transaction(async (tx: Tx) => {
    const explaining = {
      async $queryRawUnsafe<T>(query: string, ...values: unknown[]): Promise<T> {
        if (/^\s*(DELETE|SELECT)/.test(query) && query.includes('"IdempotencyKey"')) {
          const plan = await tx.$queryRawUnsafe<{ "QUERY PLAN": string }[]>(
            `EXPLAIN (COSTS OFF) ${query}`,
            ...values,
          );
          const named = plan.flatMap((row) => [
            ...row["QUERY PLAN"].matchAll(/"?IdempotencyKey_p(\d+)"?/g),
          ]);
          reads.push(new Set(named.map((m) => m[1])).size);
        }
        return tx.$queryRawUnsafe<T>(query, ...values);
      },
      $executeRawUnsafe: (query: string, ...values: unknown[]) =>
        tx.$executeRawUnsafe(query, ...values),
    };
    return removeKey(explaining, target, mode);
  });
  return { removed: result.removed, reads };
}

describe("an operator's repairs on a key table partitioned by scope", () => {
  it("a bust that names the key's scope reads one partition; by id alone, every partition", async () => {
    const named = await insertKey(t.db, { scope: "tenant-a" });
    expect(await partitionsRead({ id: named.id, scope: named.scope }, KeyRemoval.BUST)).toEqual({
      removed: true,
      reads: [1],
    });
    const bare = await insertKey(t.db, { scope: "tenant-b" });
    expect(await partitionsRead(bare.id, KeyRemoval.BUST)).toEqual({
      removed: true,
      reads: [PARTITIONS],
    });
  });

  it("a release refused (the lease is live) reads one partition for the delete and one for why", async () => {
    const live = await insertKey(t.db, { scope: "tenant-c", status: "PROCESSING" });
    expect(await partitionsRead({ id: live.id, scope: live.scope }, KeyRemoval.RELEASE)).toEqual({
      removed: false,
      reads: [1, 1],
    });
  });

  it("a key named with another scope is not found, and stays", async () => {
    const key = await insertKey(t.db, { scope: "tenant-d" });
    const result = await t.db.$transaction((tx) =>
      removeKey(tx, { id: key.id, scope: "tenant-e" }, KeyRemoval.BUST),
    );
    expect(result).toEqual({ removed: false, why: "not_found" });
    expect(
      await t.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM "IdempotencyKey" WHERE "id" = ${key.id}::uuid`,
    ).toEqual([{ n: 1 }]);
  });
});
