// The embedded PostgreSQL the app starts when no DATABASE_URL is given: where its data may live
// (the "postgres" OS user must be able to reach it) and that a second start reuses that data.
import { chmod, mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import {
  makeTempDataDir,
  resolveDataDir,
  startEmbeddedPostgres,
  type EmbeddedServer,
} from "./embedded";

const isRoot = process.getuid?.() === 0;
const cleanup: string[] = [];

afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(mode: number): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "once-embedded-test-"));
  await chmod(dir, mode);
  cleanup.push(dir);
  return dir;
}

describe("resolveDataDir", () => {
  it("falls back under the temp folder, saying why and how to fix it, when a parent is private (mode 700)", async () => {
    const home = await tempDir(0o700); // like a private home folder holding the clone
    const preferred = path.join(home, "once", ".data", "pg");
    const logs: string[] = [];
    const chosen = resolveDataDir(preferred, (m) => logs.push(m));
    if (!isRoot) {
      // Not root: PostgreSQL runs as us, and we can reach our own folders.
      expect(chosen).toBe(preferred);
      expect(logs).toEqual([]);
      return;
    }
    expect(path.dirname(chosen)).toBe(os.tmpdir());
    expect(path.basename(chosen)).toMatch(/^once-pgdata-[0-9a-f]{16}$/);
    expect(logs).toEqual([
      `[db] ${home} is not traversable by the "postgres" user (PostgreSQL cannot run as root), ` +
        `so the embedded database keeps its data in ${chosen} instead. To keep it in the project, run: chmod o+x ${home}`,
    ]);
    // Keyed by the project's path: the same clone always finds its data again, another clone never
    // shares it.
    expect(resolveDataDir(preferred, () => {})).toBe(chosen);
    expect(resolveDataDir(path.join(home, "other-clone", ".data", "pg"), () => {})).not.toBe(
      chosen,
    );
  });

  it("keeps the project's folder when every existing parent is traversable, even before .data exists", async () => {
    const project = await tempDir(0o755);
    const logs: string[] = [];
    const preferred = path.join(project, ".data", "pg"); // .data is not created yet: a fresh clone
    expect(resolveDataDir(preferred, (m) => logs.push(m))).toBe(preferred);
    await mkdir(path.join(project, ".data"), { mode: 0o755 });
    expect(resolveDataDir(preferred, (m) => logs.push(m))).toBe(preferred);
    expect(logs).toEqual([]);
  });

  it("names the nearest private parent, not the first one from the root", async () => {
    if (!isRoot) return expect(resolveDataDir("/x/y", () => {})).toBe("/x/y");
    const outer = await tempDir(0o755);
    const inner = path.join(outer, "private");
    await mkdir(inner, { mode: 0o700 });
    await chmod(inner, 0o700); // mkdir's mode is subject to the umask
    const logs: string[] = [];
    resolveDataDir(path.join(inner, "once", ".data", "pg"), (m) => logs.push(m));
    expect(logs[0]).toContain(`chmod o+x ${inner}`);
  });
});

describe("a persistent data folder", () => {
  it("started twice keeps its data: start, write a row, stop, start again, the row is there", async () => {
    const dataDir = await makeTempDataDir("once-embedded-reuse-");
    cleanup.push(path.dirname(dataDir));
    const query = async (server: EmbeddedServer, sql: string) => {
      const client = new pg.Client({ connectionString: server.url("once_reuse") });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    };

    const first = await startEmbeddedPostgres({ dataDir, persistent: true });
    try {
      await first.createDatabase("once_reuse");
      await query(
        first,
        `CREATE TABLE kept (note TEXT NOT NULL); INSERT INTO kept VALUES ('written before the restart')`,
      );
    } finally {
      await first.stop();
    }

    const second = await startEmbeddedPostgres({ dataDir, persistent: true });
    try {
      expect(second.dataDir).toBe(dataDir);
      await second.createDatabase("once_reuse"); // already there: a no-op, as on every app start
      expect(await query(second, "SELECT note FROM kept")).toEqual([
        { note: "written before the restart" },
      ]);
    } finally {
      await second.stop();
    }
  });
});
