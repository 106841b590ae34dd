// Where the payment loops run and how statements travel are configuration, validated at start-up.
import { describe, expect, it } from "vitest";
import { parseEnv, preparedStatementsWanted } from "./env";

describe("ONCE_PAYMENT_JOBS", () => {
  it("runs the payment loops in the server unless told otherwise", () => {
    expect(parseEnv({}).ONCE_PAYMENT_JOBS).toBe("1");
    expect(parseEnv({ ONCE_PAYMENT_JOBS: "0" }).ONCE_PAYMENT_JOBS).toBe("0");
  });

  it("refuses anything but 0 or 1, naming the variable", () => {
    expect(() => parseEnv({ ONCE_PAYMENT_JOBS: "off" })).toThrow(/invalid configuration[\s\S]*ONCE_PAYMENT_JOBS/);
  });
});

describe("DATABASE_PREPARED_STATEMENTS", () => {
  it("prepares statements on a direct connection, not behind a pooler, unless told", () => {
    expect(preparedStatementsWanted(parseEnv({}))).toBe(true);
    expect(preparedStatementsWanted(parseEnv({ DIRECT_DATABASE_URL: "postgresql://db:5432/once" }))).toBe(false);
    expect(preparedStatementsWanted(parseEnv({ DIRECT_DATABASE_URL: "postgresql://db:5432/once", DATABASE_PREPARED_STATEMENTS: "1" }))).toBe(true);
    expect(preparedStatementsWanted(parseEnv({ DATABASE_PREPARED_STATEMENTS: "0" }))).toBe(false);
  });

  it("refuses anything but 0 or 1, naming the variable", () => {
    expect(() => parseEnv({ DATABASE_PREPARED_STATEMENTS: "yes" })).toThrow(/invalid configuration[\s\S]*DATABASE_PREPARED_STATEMENTS/);
  });
});
