// Inputs for any procedure, generated from its own zod schema (through its JSON Schema), with
// text PostgreSQL cannot store (NUL, lone surrogates) offered for every string field. Everything
// else is mostly valid, so a hostile string reaches as deep as the schema lets it.
import fc from "fast-check";
import { z } from "zod";
import { isStorableText } from "@/shared/text";

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

/** Text a `text` column refuses or cannot hold as sent. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000",
    "\uD800",
    "\uDFFF",
    "acme\u0000",
    "checkout.\u0000placeOrder",
    "a\uDC00b",
    "\u0000\u0000\u0000",
  ),
  fc
    .tuple(
      fc.string({ maxLength: 20 }),
      fc.constantFrom("\u0000", "\uD83D", "\uDE00", "\uDBFF"),
      fc.string({ maxLength: 20 }),
    )
    .map(([a, bad, b]) => `${a}${bad}${b}`),
);

function stringFor(schema: JsonSchema): fc.Arbitrary<string> {
  const plain =
    schema.format === "uuid"
      ? fc.uuid()
      : fc.string({
          minLength: schema.minLength ?? 0,
          maxLength: Math.min(schema.maxLength ?? 30, 30),
        });
  return fc.oneof({ arbitrary: plain, weight: 2 }, { arbitrary: hostileText, weight: 1 });
}

function arbitraryOf(schema: JsonSchema): fc.Arbitrary<unknown> {
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) return fc.oneof(...choices.map(arbitraryOf));
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case "string":
      return stringFor(schema);
    case "integer":
    case "number":
      return fc.integer({
        min: Math.max(schema.minimum ?? -5, -1_000_000),
        max: Math.min(schema.maximum ?? 1000, 1_000_000),
      });
    case "boolean":
      return fc.boolean();
    case "array":
      return fc.array(schema.items ? arbitraryOf(schema.items) : fc.anything(), {
        minLength: schema.minItems ?? 0,
        maxLength: Math.min(schema.maxItems ?? 3, 3),
      });
    case "object": {
      const properties = Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([k, v]) => [k, arbitraryOf(v)]),
      );
      return fc.record(properties, { requiredKeys: schema.required ?? [] });
    }
    case "null":
      return fc.constant(null);
    default:
      return fc.anything();
  }
}

/** Inputs for a procedure whose input parsers are `inputs` (none: `undefined` only). */
export function inputArbitrary(inputs: readonly z.ZodType[]): fc.Arbitrary<unknown> {
  const [schema] = inputs;
  if (!schema) return fc.constant(undefined);
  return arbitraryOf(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema);
}

/** Whether a generated value holds a string PostgreSQL cannot store, anywhere. */
export function holdsHostileText(value: unknown): boolean {
  if (typeof value === "string") return !isStorableText(value);
  if (Array.isArray(value)) return value.some(holdsHostileText);
  if (value && typeof value === "object") return Object.values(value).some(holdsHostileText);
  return false;
}
