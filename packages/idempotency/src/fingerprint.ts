// A request's fingerprint: SHA-256 of the canonical JSON of { procedure, input }: object keys
// sorted recursively, no whitespace. A retry that serialises the same input in another key order
// still matches; any change of value does not.
import { createHash } from "node:crypto";

export function canonicalJson(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null"; // as JSON.stringify
    if (typeof value === "bigint") return JSON.stringify(value.toString());
    return JSON.stringify(value);
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : canonicalJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

export function fingerprint(procedure: string, input: unknown): string {
  return createHash("sha256").update(canonicalJson({ procedure, input })).digest("hex");
}
