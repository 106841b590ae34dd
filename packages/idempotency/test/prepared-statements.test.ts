// preparedStatements: the engine's statements on the pool are sent under their names, so each
// connection parses and plans them once. Checked in PostgreSQL's own list of the session's
// prepared statements (pg_prepared_statements), on a pool of one connection so that list is the
// whole pool's; and the answers are the protocol's, whichever way the statements travel.
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { connect, useTestDatabase, type Db } from "./support/database";
import { configure, effectsFor, wrapperEntry } from "./support/harness";

const t = useTestDatabase();
const opened: { db: Db; pool: { end(): Promise<void> } }[] = [];
afterEach(async () => {
  for (const { db, pool } of opened.splice(0)) {
    await db.$disconnect();
    await pool.end();
  }
});

/** A client on one connection, with an engine that does or does not prepare. */
function oneConnection(preparedStatements: boolean) {
  const client = connect(t.url, 1);
  opened.push(client);
  configure(client.db, {}, { preparedStatements });
  const preparedNames = async () =>
    (
      await client.pool.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements ORDER BY name",
      )
    ).rows.map((r) => r.name);
  return { ...client, preparedNames };
}

/** A new key, its replay, the same key with another input, then `more` new keys. */
async function exercise(db: Db, more: number) {
  const key = `prep-${randomUUID()}`;
  const value = `prep-${randomUUID()}`;
  const first = await wrapperEntry.call(db, { key, input: { value } });
  const replay = await wrapperEntry.call(db, { key, input: { value } });
  const reused = await wrapperEntry.call(db, { key, input: { value: "another" } });
  for (let i = 0; i < more; i++)
    expect(
      (await wrapperEntry.call(db, { key: randomUUID(), input: { value: `${value}-${i}` } }))
        .status,
    ).toBe(200);
  return { first, replay, reused, value };
}

describe("preparedStatements", () => {
  it("on: the reservation is prepared once on the connection, and the answers are the protocol's", async () => {
    const c = oneConnection(true);
    const { first, replay, reused, value } = await exercise(c.db, 20);
    expect(first.status).toBe(200);
    expect(replay).toMatchObject({ status: 200, replayed: true, text: first.text });
    expect(reused.status).toBe(422);
    expect(await effectsFor(c.db, value)).toBe(1);
    // Once each, whatever the number of calls: the live-key count (its first call) and the
    // reservation, which also answered the replay and the reuse. Prisma's own statements are not
    // named here (this client's adapter has no statementNameGenerator).
    const names = await c.preparedNames();
    expect(names).toEqual(["once_count_live", "once_reserve"]);
    await exercise(c.db, 5);
    expect(await c.preparedNames()).toEqual(names);
  });

  it("off (the default): nothing is prepared, for poolers that keep no prepared statements", async () => {
    const c = oneConnection(false);
    const { first, replay, reused } = await exercise(c.db, 3);
    expect([first.status, replay.status, reused.status]).toEqual([200, 200, 422]);
    expect(replay.replayed).toBe(true);
    expect(await c.preparedNames()).toEqual([]);
  });
});
