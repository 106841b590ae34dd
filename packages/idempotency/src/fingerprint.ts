// A request's fingerprint: SHA-256 of a canonical text of { procedure, input }, the input as the
// engine is handed it (after the router's transformer). Plain JSON data is canonical JSON (keys
// sorted at every depth, no whitespace); every other value a form no JSON text takes, so it never
// matches its JSON image: `undefined`, `-0`, `NaN`, `1n`, `Date(<ms>)`, `URL("…")`,
// `RegExp("/a/g")`, `Set[…]`, `Map[[k,v],…]` (members and entries sorted, as keys are),
// `"Uint8Array"[1,2]`,
// `Error{…}`, any other object `"ClassName"{…}` (its own enumerable properties, as superjson
// carries a registered class). Two inputs match exactly when node's isDeepStrictEqual says equal,
// key and member order aside.
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
      if (Object.is(value, -0)) return "-0";
      return Number.isFinite(value) ? JSON.stringify(value) : String(value);
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
  if (Array.isArray(value)) return `[${listOf(value, ancestors)}]`;
  const prototype = Object.getPrototypeOf(value) as object | null;
  if (prototype === Object.prototype || prototype === null) return properties(value, ancestors);
  if (value instanceof Date) return `Date(${value.getTime()})`;
  if (value instanceof URL) return `URL(${JSON.stringify(value.href)})`;
  if (value instanceof RegExp) return `RegExp(${JSON.stringify(String(value))})`;
  const of = (v: unknown) => canonical(v, ancestors);
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
    return `${JSON.stringify(value.constructor.name)}[${listOf(items, ancestors)}]`;
  }
  if (value instanceof Error) {
    const { name, message } = value;
    const cause = "cause" in value ? { cause: value.cause } : {};
    return `Error${properties({ ...value, name, message, ...cause }, ancestors)}`;
  }
  const name = (prototype.constructor as { name?: unknown } | undefined)?.name;
  return `${JSON.stringify(typeof name === "string" ? name : "")}${properties(value, ancestors)}`;
}

/** Items in order, a hole as undefined (loops, not closures: this is on every request's path). */
function listOf(items: ArrayLike<unknown>, ancestors: object[]): string {
  let text = "";
  for (let i = 0; i < items.length; i++)
    text += (i === 0 ? "" : ",") + canonical(items[i], ancestors);
  return text;
}

/** Own enumerable properties, sorted by name (a retry may send them in any order). */
function properties(value: object, ancestors: object[]): string {
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  let text = "{";
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    text += `${i === 0 ? "" : ","}${JSON.stringify(key)}:${canonical(record[key], ancestors)}`;
  }
  return `${text}}`;
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

// Earlier versions' fingerprint, as it was, so that keys they stored still replay: the same for
// plain JSON data; a Map or a Set was `{}`, a BigInt or a Date its string. So a key first used with
// such a JSON image (`{}`, the string) also matches a retry with the value: the old rule's blind
// spot, which no stored fingerprint can tell from a key stored before the upgrade.
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
