// preparedStatements (on by default): the engine's statements on the pool are sent under their
// names, so each connection parses and plans them once. Checked in PostgreSQL's own list of the
// session's prepared statements (pg_prepared_statements), on a pool of one connection so that list
// is the whole pool's; and the answers are the protocol's, whichever way the statements travel,
// also on a server connection that does not hold what the client prepared (as behind a
// transaction-mode pooler that keeps no prepared statements).
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

/** A client on one connection, with an engine that does or does not prepare (unset: default). */
function oneConnection(preparedStatements?: boolean) {
  const client = connect(t.url, 1);
  opened.push(client);
  const warnings: string[] = [];
  configure(
    client.db,
    {},
    {
      ...(preparedStatements === undefined ? {} : { preparedStatements }),
      warn: (message) => warnings.push(message),
    },
  );
  const preparedNames = async () =>
    (
      await client.pool.query<{ name: string }>(
        "SELECT name FROM pg_prepared_statements ORDER BY name",
      )
    ).rows.map((r) => r.name);
  return { ...client, preparedNames, warnings };
}

/** The engine's statement names carry a hash of their text (another text, another name). */
const ENGINE_NAME = /^once_[a-z_]+_[0-9a-f]{12}$/;

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
  it("on by default: the reservation is prepared once on the connection, and the answers are the protocol's", async () => {
    const c = oneConnection();
    const { first, replay, reused, value } = await exercise(c.db, 20);
    expect(first.status).toBe(200);
    expect(replay).toMatchObject({ status: 200, replayed: true, text: first.text });
    expect(reused.status).toBe(422);
    expect(await effectsFor(c.db, value)).toBe(1);
    // Once each, whatever the number of calls: the live-key count (its first call) and the
    // reservation, which also answered the replay and the reuse. Prisma's own statements are not
    // named here (this client's adapter has no statementNameGenerator).
    const names = await c.preparedNames();
    expect(names.map((n) => n.replace(/_[0-9a-f]{12}$/, ""))).toEqual([
      "once_count_live",
      "once_reserve",
    ]);
    expect(names.every((n) => ENGINE_NAME.test(n))).toBe(true);
    await exercise(c.db, 5);
    expect(await c.preparedNames()).toEqual(names);
    expect(c.warnings).toEqual([]);
  });

  it("off: nothing is prepared, for poolers known to keep no prepared statements", async () => {
    const c = oneConnection(false);
    const { first, replay, reused } = await exercise(c.db, 3);
    expect([first.status, replay.status, reused.status]).toEqual([200, 200, 422]);
    expect(replay.replayed).toBe(true);
    expect(await c.preparedNames()).toEqual([]);
  });

  it("a server connection that lost what this client prepared (DISCARD ALL, as a pooler's reset does): the statement is sent again unprepared, and nothing more is prepared", async () => {
    const c = oneConnection();
    await exercise(c.db, 1);
    expect(await c.preparedNames()).not.toEqual([]);
    // The pool's one connection forgets its prepared statements; the pg client still believes it
    // holds them, so its next call binds a name the server does not know (26000).
    await c.pool.query("DISCARD ALL");
    const { first, replay, reused, value } = await exercise(c.db, 5);
    expect([first.status, replay.status, reused.status]).toEqual([200, 200, 422]);
    expect(replay).toMatchObject({ replayed: true, text: first.text });
    expect(await effectsFor(c.db, value)).toBe(1);
    expect(await c.preparedNames()).toEqual([]);
    expect(c.warnings).toHaveLength(1);
    expect(c.warnings[0]).toMatch(/does not keep prepared statements.*does not exist/);
  });

  it("a server connection where another client prepared the same name (42P05, as on a shared pooler connection): sent again unprepared", async () => {
    const c = oneConnection();
    // Learn the reservation's name from a first engine on another client, then take that name on
    // this client's connection before its engine's first call.
    const other = oneConnection();
    await exercise(other.db, 0);
    const reserve = (await other.preparedNames()).find((n) => n.startsWith("once_reserve_"))!;
    await c.pool.query(`PREPARE ${reserve} AS SELECT 1`);
    const { first, replay, value } = await exercise(c.db, 2);
    expect([first.status, replay.status]).toEqual([200, 200]);
    expect(await effectsFor(c.db, value)).toBe(1);
    expect(c.warnings).toHaveLength(1);
    expect(c.warnings[0]).toMatch(/already exists/);
  });
});
