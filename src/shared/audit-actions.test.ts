// The audit log's actions have one list (audit-actions.ts): the dashboard's filter offers exactly
// it, so an entry written with an action missing from it could not be found by action. Every
// product file that writes an audit entry (through Prisma or in SQL) is read, and each action it
// names literally must be in the list (a writer that names AuditAction.X is in it by its type).
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AUDIT_ACTIONS, AuditAction } from "./audit-actions";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every product .ts file under these folders (tests, generated code and test helpers left out). */
function productFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => path.join(dir, file))
    .filter((file) => !/(^|\/)(generated|test)\//.test(file));
}

const WRITES_AUDIT = /auditEntry\.create|INSERT INTO "AuditEntry"/;
/** A quoted `noun.verb` outside comments: how an action is spelled in TypeScript and in SQL. */
const ACTION_LITERAL = /["']([a-z]+\.[a-z_]+)["']/g;

/** The actions a source names literally, its comment lines left out. */
const actionsNamed = (source: string) =>
  source
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
    .flatMap((line) => [...line.matchAll(ACTION_LITERAL)].map(([, action]) => action!));

const writers = [...productFiles("src"), ...productFiles("services")].flatMap((file) => {
  const source = readFileSync(path.join(ROOT, file), "utf8");
  return WRITES_AUDIT.test(source) ? [{ file, named: actionsNamed(source) }] : [];
});

describe("the audit log's actions: one list, every writer's action in it", () => {
  it("finds the writers (the scan is not empty): keys, sessions, outbox, reconciliation", () => {
    expect(writers.length).toBeGreaterThanOrEqual(5);
    expect(writers.map((w) => w.file)).toEqual(
      expect.arrayContaining([
        // The admin routers' one writer (writeAudit), whose action is an AuditAction by its type.
        "src/server/api/routers/admin/view.ts",
        "src/server/admin/bulk-release.ts",
        "src/payments/books/record.ts",
      ]),
    );
  });

  it("reads an action named in TypeScript or in SQL, not a comment's words", () => {
    const source = [
      '// a comment naming "ops@example.org"',
      '  action: "order.refund",',
      "  SELECT ${actor}, 'outbox.close', 'OutboxMessage'",
    ].join("\n");
    expect(actionsNamed(source)).toEqual(["order.refund", "outbox.close"]);
    expect(AUDIT_ACTIONS).not.toContain("order.refund");
  });

  it.each(writers.map((w) => [w.file, w.named] as const))(
    "%s writes only listed actions",
    (_file, named) => {
      for (const action of named) expect(AUDIT_ACTIONS).toContain(action);
    },
  );

  it("lists the actions the filter lacked before: ending sessions, resolving a finding", () => {
    expect(AUDIT_ACTIONS).toEqual(
      expect.arrayContaining([
        AuditAction.SESSION_END,
        AuditAction.SESSION_END_ALL,
        AuditAction.RECONCILIATION_RESOLVE,
      ]),
    );
    expect(new Set(AUDIT_ACTIONS).size).toBe(AUDIT_ACTIONS.length);
  });
});
