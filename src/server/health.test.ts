// GET /api/health: up, busy, down or unable, from the process's one probe (no query per caller),
// with the reading's age, and not a word about where the database is or what drives it.
import { afterEach, describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { useOwnPostgres } from "../test/own-postgres";
import { createDb, poolOf, type Db } from "./db/client";
import { freePort, waitFor } from "../../tools/process";
import { healthAnswer, HealthMonitor, STALE_AFTER_MS, type HealthBody } from "./health";

const t = useTestDatabase({ poolMax: 1 });
const own = useOwnPostgres({ prefix: "once-health-" });

const monitors: HealthMonitor[] = [];
afterEach(() => {
  for (const monitor of monitors.splice(0)) monitor.stop();
});

/** A monitor stopped after the test; `intervalMs` long enough that only the asked probe runs. */
function monitorOf(db: Db, options: ConstructorParameters<typeof HealthMonitor>[1] = {}) {
  const monitor = new HealthMonitor(db, options);
  monitors.push(monitor);
  return monitor;
}

async function answer(res: Response) {
  const text = await res.text();
  return {
    status: res.status,
    body: JSON.parse(text) as HealthBody,
    text,
    headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n"),
  };
}

const ONLY_THE_FIRST_PROBE = { intervalMs: 3_600_000 };

describe("healthAnswer", () => {
  it("200 up while the database answers, with the reading's age", async () => {
    const res = await answer(await healthAnswer(monitorOf(t.db)));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: "up", database: "up", ageMs: expect.any(Number) });
    expect(res.headers).toContain("cache-control: no-store");
  });

  it("N concurrent checks cost no statement beyond the probe's", async () => {
    const pool = poolOf(t.db)!;
    let checkouts = 0;
    const count = () => checkouts++;
    pool.on("acquire", count);
    try {
      const monitor = monitorOf(t.db, ONLY_THE_FIRST_PROBE);
      const answers = await Promise.all(
        Array.from({ length: 200 }, () => healthAnswer(monitor).then(answer)),
      );
      expect(answers.every((a) => a.status === 200 && a.body.status === "up")).toBe(true);
      expect(checkouts).toBe(1); // the first probe, shared by all 200
      await Promise.all(Array.from({ length: 200 }, () => healthAnswer(monitor)));
      expect(checkouts).toBe(1);
    } finally {
      pool.off("acquire", count);
    }
  });

  it("503 unable, whatever the database says, while the instance's requests are stuck", async () => {
    const monitor = monitorOf(t.db);
    const res = await answer(await healthAnswer(monitor, { stuck: () => true }));
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ status: "unable", reason: "requests_stuck", database: "up" });
    expect(res.headers).toContain("retry-after: 1");
    const moving = await answer(await healthAnswer(monitor, { stuck: () => false }));
    expect(moving.body).toMatchObject({ status: "up" });
  });

  it("200 busy, not down, while every connection is in use and requests wait for one", async () => {
    const pool = poolOf(t.db)!;
    const monitor = monitorOf(t.db, ONLY_THE_FIRST_PROBE);
    const held = await pool.connect();
    const waiting = pool.query("SELECT 1");
    try {
      expect(pool.waitingCount).toBe(1);
      const res = await answer(await healthAnswer(monitor));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: "busy", database: "busy" });
    } finally {
      held.release();
      await waiting;
    }
    expect(await monitor.probeOnce()).toBe("up");
  });

  it("a reading older than STALE_AFTER_MS (the probe stuck) is down", async () => {
    let now = 0;
    const monitor = monitorOf(t.db, { ...ONLY_THE_FIRST_PROBE, now: () => now });
    expect((await answer(await healthAnswer(monitor))).body).toMatchObject({ status: "up" });
    now = STALE_AFTER_MS + 1;
    const stale = await answer(await healthAnswer(monitor));
    expect(stale.status).toBe(503);
    expect(stale.body).toEqual({ status: "down", database: "down", ageMs: STALE_AFTER_MS + 1 });
  });

  it("503 down when the database cannot be reached, with nothing about the host, port or driver", async () => {
    const port = await freePort();
    const down = createDb(`postgresql://postgres:secret-password@127.0.0.1:${port}/once`, {
      max: 1,
    });
    try {
      const res = await answer(await healthAnswer(monitorOf(down)));
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: "down", database: "down" });
      const everything = `${res.text}\n${res.headers}`;
      for (const leak of [
        "127.0.0.1",
        String(port),
        "ECONNREFUSED",
        "postgres",
        "prisma",
        "secret",
        "connect",
      ]) {
        expect(everything.toLowerCase(), leak).not.toContain(leak.toLowerCase());
      }
      expect(res.headers).toContain("retry-after: 1");
    } finally {
      await down.$disconnect();
    }
  });

  it("the probe loop turns down when PostgreSQL stops, and up when it is back", async () => {
    const monitor = monitorOf(own.db); // the real interval
    const state = async () => (await monitor.current()).database;
    expect(await state()).toBe("up");
    await own.stop();
    try {
      await waitFor("health to say down", async () => (await state()) === "down");
    } finally {
      await own.start();
    }
    await waitFor("health to say up", async () => (await state()) === "up");
  });
});
