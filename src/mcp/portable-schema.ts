// Tool schemas as strict clients read them: JSON Schema the SDK writes from zod uses type arrays
// for nullable values (["string", "null"]) and empty schemas ({}) for free-form values, which
// strict validators (MCP Inspector --strict, OpenAI's strict function calling) reject or warn on.
// The same constraints are rewritten as anyOf branches and an explicit "any JSON value" union.
type Schema = Record<string, unknown>;

const ANY_JSON: Schema = {
  description: "any JSON value",
  anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }, { type: "object" }, { type: "array" }],
};
// Keys that describe the value as a whole and stay on the outer schema when it is split into branches.
const OUTER = new Set(["description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly", "$schema"]);
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "definitions"];
const SUBSCHEMAS = ["items", "additionalProperties", "not", "contains", "propertyNames"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];

const isSchema = (v: unknown): v is Schema => v !== null && typeof v === "object" && !Array.isArray(v);

export function portableSchema(schema: unknown, top = true): unknown {
  if (!isSchema(schema)) return schema;
  if (!top && Object.keys(schema).length === 0) return ANY_JSON;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) {
    if (SUBSCHEMA_MAPS.includes(k) && isSchema(v)) out[k] = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, portableSchema(s, false)]));
    else if (SUBSCHEMAS.includes(k) && isSchema(v)) out[k] = portableSchema(v, false);
    else if (SUBSCHEMA_LISTS.includes(k) && Array.isArray(v)) out[k] = v.map((s) => portableSchema(s, false));
    else out[k] = v;
  }
  if (!Array.isArray(out.type)) return out;
  const types = out.type as string[];
  if (types.length === 1) return { ...out, type: types[0] };
  const outer: Schema = {};
  const inner: Schema = {};
  for (const [k, v] of Object.entries(out)) if (k !== "type") (OUTER.has(k) ? outer : inner)[k] = v;
  return { ...outer, anyOf: types.map((t) => (t === "null" ? { type: "null" } : { type: t, ...inner })) };
}
