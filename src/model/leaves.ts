// Which strings of a block's data or a node's fields machine translation sends, where the content
// model declares the type: exactly those under a `translatable: true` property, strings and arrays
// of strings, nested objects included. A translatable property inside an array of objects is left
// out: a translation overrides arrays whole, and the model refuses an override of the array itself
// when the array is not translatable (src/model/compile.ts), so such a result could not be stored.
import { isPlainObject } from "../lib/merge";
import { walkSchema } from "./compile";

export type Path = Array<string | number>;
/** A string to translate: where it sits, and the format its schema gives it (markdown and html keep their markup). */
export interface ModelLeaf {
  path: Path;
  text: string;
  format: "markdown" | "html" | null;
  /** The schema's maxLength for the string, when it has one. */
  maxLength?: number;
}

/** The schema formats whose strings are identifiers or codes, never prose, even under a translatable property. */
const NOT_PROSE_FORMATS = new Set(["uri", "date-time", "date", "time", "email", "color", "node", "media"]);

export function translatableLeaves(schema: Record<string, unknown>, value: Record<string, unknown>): ModelLeaf[] {
  const roots: (readonly string[])[] = [];
  walkSchema(schema, (path, sub) => {
    if (sub.translatable !== true || path.includes("*")) return;
    if (roots.some((r) => r.every((k, i) => path[i] === k))) return;
    roots.push(path);
  });
  const out: ModelLeaf[] = [];
  for (const root of roots) {
    let at: unknown = value;
    let sub: unknown = schema;
    for (const key of root) {
      at = isPlainObject(at) && Object.hasOwn(at, key) ? at[key] : undefined;
      sub = isPlainObject(sub) && isPlainObject(sub.properties) ? sub.properties[key] : undefined;
    }
    collect(at, sub, [...root], out);
  }
  return out;
}

function collect(value: unknown, schema: unknown, path: Path, out: ModelLeaf[]): void {
  const s = isPlainObject(schema) ? schema : {};
  if (typeof value === "string") {
    const format = typeof s.format === "string" ? s.format : null;
    // Blank text has nothing to translate (and the vendor call refuses it).
    if (value.trim() === "" || (format !== null && NOT_PROSE_FORMATS.has(format))) return;
    const maxLength = typeof s.maxLength === "number" ? s.maxLength : undefined;
    out.push({ path, text: value, format: format === "markdown" || format === "html" ? format : null, ...(maxLength !== undefined ? { maxLength } : {}) });
  } else if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) collect(v, s.items, [...path, i], out);
  } else if (isPlainObject(value)) {
    const props = isPlainObject(s.properties) ? s.properties : {};
    for (const [k, v] of Object.entries(value)) collect(v, props[k], [...path, k], out);
  }
}
