// The embedded database's data lives outside the project, where the dev server's watcher cannot
// see PostgreSQL write (the reload loop of issue 19), one folder per clone.
import path from "node:path";
import { describe, expect, it } from "vitest";
import { embeddedDataDir, PROJECT_ROOT } from "./url";

describe("embeddedDataDir", () => {
  it("is outside the project tree, the same on every start, and ONCE_PG_DATA_DIR moves it", () => {
    const dir = embeddedDataDir({ HOME: "/home/dev" });
    expect(path.relative(PROJECT_ROOT, dir).startsWith("..")).toBe(true);
    expect(embeddedDataDir({ HOME: "/home/dev" })).toBe(dir);
    expect(dir).toContain(path.basename(PROJECT_ROOT));
    expect(embeddedDataDir({ ONCE_PG_DATA_DIR: "/srv/once-pg" })).toBe("/srv/once-pg");
  });
});
