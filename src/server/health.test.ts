// GET /api/health: up or down, and not a word about where the database is or what drives it.
import { describe, expect, it } from "vitest";
import { useTestDatabase } from "../test/database";
import { createDb } from "./db/client";
import { freePort } from "../../tools/process";
import { checkHealth } from "./health";

const t = useTestDatabase({ poolMax: 1 });

async function answer(res: Response) {
  const text = await res.text();
  return { status: res.status, text, headers: [...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n") };
}

describe("checkHealth", () => {
  it("200 up while the database answers", async () => {
    const res = await answer(await checkHealth(t.db));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ status: "up", database: "up" });
  });

  it("503 down when it does not, with nothing about the host, port or driver", async () => {
    const port = await freePort();
    const down = createDb(`postgresql://postgres:secret-password@127.0.0.1:${port}/once`, { max: 1 });
    try {
      const res = await answer(await checkHealth(down));
      expect(res.status).toBe(503);
      expect(JSON.parse(res.text)).toEqual({ status: "down", database: "down" });
      const everything = `${res.text}\n${res.headers}`;
      for (const leak of ["127.0.0.1", String(port), "ECONNREFUSED", "postgres", "prisma", "secret", "connect"]) {
        expect(everything.toLowerCase(), leak).not.toContain(leak.toLowerCase());
      }
      expect(res.headers).toContain("retry-after: 1");
    } finally {
      await down.$disconnect();
    }
  });
});
