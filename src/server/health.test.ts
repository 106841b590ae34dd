// GET /api/health: up, busy or down, and not a word about where the database is or what drives it.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { createDb, poolOf } from "./db/client";
import { freePort } from "../../tools/process";
import { checkHealth } from "./health";

const t = useTestDatabase({ poolMax: 1 });

async function answer(res: Response) {
  const text = await res.text();
  return {
    status: res.status,
    text,
    headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n"),
  };
}

describe("checkHealth", () => {
  it("200 up while the database answers", async () => {
    const res = await answer(await checkHealth(t.db));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: "up", database: "up" });
  });

  it("503 unable, whatever the database says, while the instance's requests are stuck", async () => {
    const res = await answer(await checkHealth(t.db, { stuck: () => true }));
    expect(res.status).toBe(503);
    expect(JSON.parse(res.text)).toEqual({ status: "unable", reason: "requests_stuck" });
    expect(res.headers).toContain("retry-after: 1");
    const moving = await answer(await checkHealth(t.db, { stuck: () => false }));
    expect(JSON.parse(moving.text)).toEqual({ status: "up", database: "up" });
  });

  it("200 busy at once, not down, while every connection is in use and requests wait for one", async () => {
    const pool = poolOf(t.db)!;
    const held = await pool.connect();
    const waiting = pool.query("SELECT 1");
    try {
      expect(pool.waitingCount).toBe(1);
      const started = performance.now();
      const res = await answer(await checkHealth(t.db));
      expect(performance.now() - started).toBeLessThan(100);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.text)).toEqual({ status: "busy", database: "busy" });
    } finally {
      held.release();
      await waiting;
    }
    expect(JSON.parse((await answer(await checkHealth(t.db))).text)).toEqual({
      status: "up",
      database: "up",
    });
  });

  it("503 down when it does not, with nothing about the host, port or driver", async () => {
    const port = await freePort();
    const down = createDb(`postgresql://postgres:secret-password@127.0.0.1:${port}/once`, {
      max: 1,
    });
    try {
      const res = await answer(await checkHealth(down));
      expect(res.status).toBe(503);
      expect(JSON.parse(res.text)).toEqual({ status: "down", database: "down" });
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
});
