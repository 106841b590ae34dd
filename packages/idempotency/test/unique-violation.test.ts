// P2002, handled where it happens: a handler whose own write hits a unique constraint (a slug
// taken) gets a deterministic 409 unique_violation naming the constraint's fields, stored with
// the key and replayed, not a 500 and a released key; and it costs the pool no connection (the
// violation happens inside the key's transaction, whose connection goes back to the pool intact).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useBackendObserver } from "./support/backends";
import { useTestDatabase } from "./support/database";
import { Prisma } from "./support/generated/client";
import { ENTRY_POINTS, effectsFor, keyRow, reasonOf } from "./support/harness";

const POOL = 4;
const t = useTestDatabase({ poolMax: POOL });
const { poolBackends, fillPool } = useBackendObserver(t, POOL);

describe("what Prisma 7 with @prisma/adapter-pg says about a unique violation", () => {
  // So the engine reads the index's columns from the catalog to name the fields.
  it("is P2002 naming only the index (meta.driverAdapterError.cause.constraint.index): no meta.target, no fields", async () => {
    const slug = `probe-${randomUUID()}`;
    await t.db.testSlug.create({ data: { scope: "acme", slug } });
    const error = await t.db
      .$transaction((tx) => tx.testSlug.create({ data: { scope: "acme", slug } }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Prisma.PrismaClientKnownRequestError);
    const known = error as Prisma.PrismaClientKnownRequestError;
    expect(known.code).toBe("P2002");
    expect(known.meta?.target).toBeUndefined();
    expect(known.meta?.driverAdapterError).toMatchObject({
      cause: {
        kind: "UniqueConstraintViolation",
        originalCode: "23505",
        constraint: { index: "TestSlug_scope_slug_key" },
      },
    });
  });
});

describe.each(ENTRY_POINTS)("through the $name", (entry) => {
  it("stores the handler's own P2002 as 409 unique_violation naming the fields, and replays it byte for byte", async () => {
    const slug = `taken-${randomUUID()}`;
    expect(
      (await entry.call(t.db, { key: randomUUID(), input: { value: `first-${slug}`, slug } }))
        .status,
    ).toBe(200);

    const key = randomUUID();
    const value = `second-${slug}`;
    const first = await entry.call(t.db, { key, input: { value, slug } });
    expect(first.status).toBe(409);
    expect(reasonOf(first)).toBe("unique_violation");
    expect(first.text).toContain("A unique constraint failed on scope, slug");
    const retry = await entry.call(t.db, { key, input: { value, slug } });
    expect(retry).toMatchObject({ status: 409, text: first.text, replayed: true });
    expect(await keyRow(t.db, "acme", key)).toMatchObject({
      status: "FAILED",
      responseStatus: 409,
      attempts: 1,
    });
    expect(await effectsFor(t.db, value)).toBe(0); // the business transaction rolled back
  });

  it("costs the pool no connection: the conflict and its replays reuse the pool's connections", async () => {
    const slug = `pooled-${randomUUID()}`;
    await t.db.testSlug.create({ data: { scope: "acme", slug } });
    await fillPool();
    const before = await poolBackends();
    const keys = Array.from({ length: 8 }, () => randomUUID());
    const answers = await Promise.all(
      keys.map((key, i) =>
        entry.call(t.db, { key, input: { value: `pooled-${i}-${slug}`, slug } }),
      ),
    );
    const replays = await Promise.all(
      keys.map((key, i) =>
        entry.call(t.db, { key, input: { value: `pooled-${i}-${slug}`, slug } }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(keys.map(() => 409));
    expect(replays.every((a) => a.status === 409 && a.replayed)).toBe(true);
    expect(await poolBackends()).toEqual(before);
  });
});
