// Reading the parts of a JSON Schema that the form uses; the schema is outside JSON, narrowed here.
import type { JsonSchema } from "../form/types";

export const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The schema's `type`, or the first non-null one of a type list. */
export function typeOf(schema: JsonSchema): string | null {
  const t = schema.type;
  if (typeof t === "string") return t;
  if (Array.isArray(t)) return (t.find((x) => typeof x === "string" && x !== "null") as string | undefined) ?? null;
  if (isRecord(schema.properties)) return "object";
  return null;
}

export const formatOf = (schema: JsonSchema): string | null => (typeof schema.format === "string" ? schema.format : null);

export const labelOf = (schema: JsonSchema, name: string): string => (typeof schema.title === "string" && schema.title.trim() !== "" ? schema.title : name);

export const descriptionOf = (schema: JsonSchema): string | null => (typeof schema.description === "string" && schema.description !== "" ? schema.description : null);

export function propertiesOf(schema: JsonSchema): Array<[string, JsonSchema]> {
  if (!isRecord(schema.properties)) return [];
  return Object.entries(schema.properties).filter((e): e is [string, JsonSchema] => isRecord(e[1]));
}

export const requiredOf = (schema: JsonSchema): Set<string> => new Set(Array.isArray(schema.required) ? schema.required.filter((x) => typeof x === "string") : []);

export const numberOf = (schema: JsonSchema, key: string): number | undefined => (typeof schema[key] === "number" ? (schema[key] as number) : undefined);

/** Whether a translation may set something inside: the schema or a nested object property says `translatable: true`. */
export function hasTranslatable(schema: JsonSchema): boolean {
  if (schema.translatable === true) return true;
  return propertiesOf(schema).some(([, sub]) => hasTranslatable(sub));
}

/** The first value of a new array item or block: the schema's defaults, else an empty value of its type. */
export function initialValue(schema: JsonSchema | null): unknown {
  if (!schema) return {};
  if (schema.default !== undefined) return structuredClone(schema.default);
  switch (typeOf(schema)) {
    case "object":
      return defaultsOf(schema);
    case "array":
      return [];
    case "string":
      return Array.isArray(schema.enum) ? schema.enum[0] : "";
    case "boolean":
      return false;
    case "number":
    case "integer":
      return numberOf(schema, "minimum") ?? 0;
    default:
      return null;
  }
}

/** An object holding the `default` of each property that gives one (nested objects included). */
export function defaultsOf(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = isRecord(schema.default) ? structuredClone(schema.default) : {};
  for (const [name, sub] of propertiesOf(schema)) {
    if (out[name] !== undefined) continue;
    if (sub.default !== undefined) out[name] = structuredClone(sub.default);
    else if (typeOf(sub) === "object") {
      const nested = defaultsOf(sub);
      if (Object.keys(nested).length > 0) out[name] = nested;
    }
  }
  return out;
}

/** A stored value as plain text (the base value beside a translation; html as its text, never as markup). */
export function plainText(value: unknown, format: string | null): string {
  if (value === undefined || value === null || value === "") return "(empty)";
  if (typeof value === "string") return format === "html" ? htmlText(value) : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value, null, 2);
}

// DOMParser builds an inert document: no script runs and nothing loads; only its text is read.
function htmlText(html: string): string {
  const body = new DOMParser().parseFromString(html, "text/html").body;
  for (const block of body.querySelectorAll("p, li, h1, h2, h3, h4, h5, h6, blockquote, pre, br")) block.append("\n");
  return (body.textContent ?? "").replace(/\n{3,}/g, "\n\n").trim();
}
