// The dashboard's key counts: exact on a small table, the planner's estimates past the threshold
// (here lowered to 10 rows, so a table ANALYZE reads whole gives estimates equal to the truth).
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "@/test/database";
import { insertKey } from "@/test/admin-factory";
import { keyGauges } from "./key-gauges";

const t = useTestDatabase();

describe("keyGauges", () => {
  it("counts exactly on a small table, and estimates the finished statuses past the threshold", async () => {
    for (let i = 0; i < 12; i++) await insertKey(t.db, { status: "COMPLETED" });
    for (let i = 0; i < 4; i++) await insertKey(t.db, { status: "FAILED" });
    await insertKey(t.db, { status: "PROCESSING", leaseSeconds: -30 });
    await insertKey(t.db, { status: "PROCESSING" });
    const exact = await keyGauges(t.db);
    expect(exact).toEqual({
      byStatus: { COMPLETED: 12, FAILED: 4, PROCESSING: 2 },
      stuck: 1,
      estimated: false,
    });

    await t.db.$executeRawUnsafe(`ANALYZE "IdempotencyKey"`);
    await insertKey(t.db, { status: "PROCESSING" }); // after ANALYZE: PROCESSING stays exact, the rest do not see it
    await insertKey(t.db, { status: "COMPLETED" });
    const estimated = await keyGauges(t.db, 10);
    expect(estimated).toEqual({
      byStatus: { COMPLETED: 12, FAILED: 4, PROCESSING: 3 },
      stuck: 1,
      estimated: true,
    });
  });
});
