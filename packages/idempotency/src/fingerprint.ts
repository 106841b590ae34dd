// A request's fingerprint: SHA-256 of a canonical text of { procedure, input }, the input as the
// engine is handed it, i.e. after the router's transformer (superjson's Set, Map, BigInt, Date…;
// without one, the parsed JSON document). Plain JSON data is written as canonical JSON, object
// keys sorted at every depth and no whitespace, so a retry that serialises it in another key order
// still matches. Every other value is written in a form no JSON text takes, so it never matches
// the JSON a transformer would turn it into: `undefined`, `-0`, `NaN`, `Infinity`, `1n`,
// `Date(<ms>)`, `URL("…")`, `RegExp("/…/g")`, `Set[…]` and `Map[[k,v],…]` (members and entries
// sorted: their order is no more part of the request than a key order), `"Uint8Array"[1,2]`,
// `Error{…}` (name, message, cause, own properties), and any other object as `"ClassName"{…}`
// (its own enumerable properties: what superjson carries of a registered class). Two inputs match
// exactly when they are deeply equal (node's isDeepStrictEqual, key and member order aside).
import { createHash } from "node:crypto";

export function canonicalJson(value: unknown): string {
  return canonical(value, []);
}

function canonical(value: unknown, ancestors: object[]): string {
  switch (typeof value) {
    case "string":
    case "boolean":
      return JSON.stringify(value);
    case "number":
      return Object.is(value, -0)
        ? "-0"
        : Number.isFinite(value)
          ? JSON.stringify(value)
          : `${value}`;
    case "bigint":
      return `${value}n`;
    case "undefined":
      return "undefined";
    case "symbol":
      return `Symbol(${JSON.stringify(value.description ?? "")})`;
    case "function":
      throw new TypeError("A request's input must be data: a function cannot be fingerprinted");
  }
  if (value === null) return "null";
  const object = value as object;
  if (ancestors.includes(object))
    throw new TypeError("A request's input must be data: a cyclic value cannot be fingerprinted");
  ancestors.push(object);
  const text = canonicalObject(object, ancestors);
  ancestors.pop();
  return text;
}

function canonicalObject(value: object, ancestors: object[]): string {
  const of = (v: unknown) => canonical(v, ancestors);
  if (Array.isArray(value)) return `[${Array.from(value, of).join(",")}]`;
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype === Object.prototype || prototype === null) return properties(value, of);
  if (value instanceof Date) return `Date(${value.getTime()})`;
  if (value instanceof URL) return `URL(${JSON.stringify(value.href)})`;
  if (value instanceof RegExp) return `RegExp(${JSON.stringify(String(value))})`;
  if (value instanceof Set) return `Set[${Array.from(value, of).sort().join(",")}]`;
  if (value instanceof Map)
    return `Map[${Array.from(value, ([k, v]) => `[${of(k)},${of(v)}]`)
      .sort()
      .join(",")}]`;
  if (value instanceof ArrayBuffer) return `"ArrayBuffer"[${new Uint8Array(value).join(",")}]`;
  if (ArrayBuffer.isView(value)) {
    const items =
      value instanceof DataView
        ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
        : (value as unknown as ArrayLike<unknown>);
    return `${JSON.stringify(value.constructor.name)}[${Array.from(items, of).join(",")}]`;
  }
  if (value instanceof Error) {
    const { name, message } = value;
    const cause = "cause" in value ? { cause: value.cause } : {};
    return `Error${properties({ ...value, name, message, ...cause }, of)}`;
  }
  const name = (prototype.constructor as { name?: unknown } | undefined)?.name;
  return `${JSON.stringify(typeof name === "string" ? name : "")}${properties(value, of)}`;
}

/** Own enumerable properties, sorted by name (a retry may send them in any order). */
function properties(value: object, of: (v: unknown) => string): string {
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${of(record[k])}`).join(",")}}`;
}

export function fingerprint(procedure: string, input: unknown): string {
  return createHash("sha256").update(canonicalJson({ procedure, input })).digest("hex");
}

/** A request's fingerprint, and whether a stored one is this request's. */
export interface RequestFingerprint {
  /** What a key reserved for this request stores. */
  readonly value: string;
  /**
   * `value`, or the fingerprint earlier versions gave this request (a key stored before the
   * upgrade still replays for it): only computed when `value` does not match.
   */
  matches(stored: string): boolean;
}

export function requestFingerprint(procedure: string, input: unknown): RequestFingerprint {
  const value = fingerprint(procedure, input);
  let legacy: string | undefined;
  return {
    value,
    matches: (stored) =>
      stored === value || stored === (legacy ??= legacyFingerprint(procedure, input)),
  };
}

// Earlier versions' fingerprint, kept as it was so that keys they stored still replay: the same
// text for plain JSON data; a Map or a Set was `{}`, a BigInt its string, a Date its ISO string,
// undefined missing (null in an array), a number JSON cannot write null. So it also matches a
// key first used with such a value's JSON form (`{}`, the string) when retried with the value: the
// old rule, which cannot tell the two apart.
export function legacyFingerprint(procedure: string, input: unknown): string {
  return createHash("sha256").update(legacyJson({ procedure, input })).digest("hex");
}

function legacyJson(value: unknown): string {
  if (value === undefined) return "null";
  if (value === null || typeof value !== "object") {
    if (typeof value === "number" && !Number.isFinite(value)) return "null"; // as JSON.stringify
    if (typeof value === "bigint") return JSON.stringify(value.toString());
    return JSON.stringify(value);
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (Array.isArray(value))
    return `[${value.map((v) => (v === undefined ? "null" : legacyJson(v))).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${legacyJson(v)}`).join(",")}}`;
}
