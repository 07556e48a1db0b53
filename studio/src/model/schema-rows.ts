// A type's JSON Schema read as rows a person scans: one per property (nested objects and array items
// as dotted paths), with its type, format, whether it is required or translatable, and the other
// constraints in words. Everything stays text: schemas may be written by an agent.

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export interface PropertyRow {
  path: string;
  title: string | null;
  description: string | null;
  type: string;
  format: string | null;
  required: boolean;
  translatable: boolean;
  details: string[];
}

const short = (v: unknown): string => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
};

function typeOf(schema: Json): string {
  const t = schema.type;
  const base = Array.isArray(t) ? t.map(String).join(" or ") : typeof t === "string" ? t : schema.enum ? "enum" : schema.const !== undefined ? "const" : "any";
  if (t === "array" && isObject(schema.items)) return `array of ${typeOf(schema.items)}`;
  return base;
}

function detailsOf(schema: Json): string[] {
  const d: string[] = [];
  if (Array.isArray(schema.enum)) d.push(`one of ${schema.enum.map(short).join(", ")}`);
  if (schema.const !== undefined) d.push(`always ${short(schema.const)}`);
  if (schema.index === true) d.push("indexed");
  if (typeof schema.minLength === "number") d.push(`at least ${schema.minLength} characters`);
  if (typeof schema.maxLength === "number") d.push(`at most ${schema.maxLength} characters`);
  if (typeof schema.minimum === "number") d.push(`minimum ${schema.minimum}`);
  if (typeof schema.maximum === "number") d.push(`maximum ${schema.maximum}`);
  if (typeof schema.minItems === "number") d.push(`at least ${schema.minItems} items`);
  if (typeof schema.maxItems === "number") d.push(`at most ${schema.maxItems} items`);
  if (typeof schema.pattern === "string") d.push(`pattern ${short(schema.pattern)}`);
  if (schema.default !== undefined) d.push(`default ${short(schema.default)}`);
  if (schema.additionalProperties === false || schema.unevaluatedProperties === false) d.push("no other properties");
  return d;
}

/** The rows of an object schema's properties, depth first. */
export function propertyRows(schema: unknown, prefix = ""): PropertyRow[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required : [];
  const rows: PropertyRow[] = [];
  for (const [name, sub] of Object.entries(schema.properties)) {
    if (!isObject(sub)) continue;
    const path = prefix ? `${prefix}.${name}` : name;
    const items = sub.type === "array" && isObject(sub.items) ? sub.items : null;
    rows.push({
      path,
      title: typeof sub.title === "string" ? sub.title : null,
      description: typeof sub.description === "string" ? sub.description : null,
      type: typeOf(sub),
      format: typeof sub.format === "string" ? sub.format : items && typeof items.format === "string" ? `${items.format} (items)` : null,
      required: required.includes(name),
      translatable: sub.translatable === true,
      details: detailsOf(sub),
    });
    rows.push(...propertyRows(sub, path));
    if (items) rows.push(...propertyRows(items, `${path}[]`));
  }
  return rows;
}

/** Whether a type's schema closes its object (no property beyond those declared). */
export const isClosed = (schema: unknown): boolean => isObject(schema) && (schema.additionalProperties === false || schema.unevaluatedProperties === false);
