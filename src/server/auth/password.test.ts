// scrypt password hashes: a known answer from the scrypt RFC, salts, parameters read back, and
// stored values an attacker (or a corrupted row) could put in the table.
import { describe, expect, it } from "vitest";
import {
  hashPassword,
  passwordProblem,
  SCRYPT_PARAMS,
  verifyAgainstDecoy,
  verifyPassword,
} from "./password";

// RFC 7914 §12, the third vector: scrypt("pleaseletmein", "SodiumChloride", N=16384, r=8, p=1, 64).
const RFC_KEY = Buffer.from(
  "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887",
  "hex",
);
const rfcStored = `scrypt$N=16384,r=8,p=1$${Buffer.from("SodiumChloride").toString("base64url")}$${RFC_KEY.toString("base64url")}`;

describe("verifyPassword", () => {
  it("accepts the RFC 7914 test vector: the stored parameters and salt are the ones used", async () => {
    expect(await verifyPassword("pleaseletmein", rfcStored)).toBe(true);
  });

  it("refuses a wrong password, one character off, or with a different case", async () => {
    expect(await verifyPassword("pleaseletmeim", rfcStored)).toBe(false);
    expect(await verifyPassword("PleaseLetMeIn", rfcStored)).toBe(false);
    expect(await verifyPassword("", rfcStored)).toBe(false);
  });

  it("refuses malformed, truncated or absurd stored values instead of throwing or hanging", async () => {
    const [, , salt, hash] = rfcStored.split("$");
    for (const stored of [
      "",
      "plain-text-password",
      `bcrypt$N=16384,r=8,p=1$${salt}$${hash}`,
      `scrypt$N=16384,r=8,p=1$${salt}$`,
      `scrypt$N=16383,r=8,p=1$${salt}$${hash}`, // not a power of two
      `scrypt$N=1073741824,r=8,p=1$${salt}$${hash}`, // 2^30: would need 1 TiB of memory
      `scrypt$N=16384,r=0,p=1$${salt}$${hash}`,
      `scrypt$N=16384,r=8,p=99$${salt}$${hash}`,
    ]) {
      expect(await verifyPassword("pleaseletmein", stored), stored).toBe(false);
    }
  });
});

describe("hashPassword", () => {
  it("stores the algorithm, its parameters, a salt and the hash, and verifies", async () => {
    const stored = await hashPassword("correct horse battery staple");
    expect(stored).toMatch(/^scrypt\$N=32768,r=8,p=1\$[\w-]{22}\$[\w-]{43}$/);
    expect(SCRYPT_PARAMS).toEqual({ N: 32768, r: 8, p: 1 });
    expect(await verifyPassword("correct horse battery staple", stored)).toBe(true);
    expect(await verifyPassword("correct horse battery stapler", stored)).toBe(false);
  });

  it("salts: the same password hashes differently each time, and the password is not in it", async () => {
    const [a, b] = await Promise.all([
      hashPassword("the same password"),
      hashPassword("the same password"),
    ]);
    expect(a).not.toBe(b);
    expect(a).not.toContain("the same password");
    expect(a.split("$")[2]).not.toBe(b.split("$")[2]);
  });

  it("refuses passwords under 12 or over 1024 characters", async () => {
    expect(passwordProblem("short")).toMatch(/at least 12 characters/);
    expect(passwordProblem("x".repeat(1025))).toMatch(/at most 1024 characters/);
    expect(passwordProblem("twelve chars")).toBeNull();
    await expect(hashPassword("short")).rejects.toThrow(/at least 12/);
  });

  it("the decoy used for unknown accounts never matches", async () => {
    expect(await verifyAgainstDecoy("anything at all")).toBe(false);
  });
});
