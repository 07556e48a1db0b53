export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Deep merge of an override (a translation's block data or meta) over the base: objects merge key
 * by key, anything else (arrays, scalars, null) replaces.
 */
export function deepMerge(base: Record<string, unknown>, override: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const key of Object.keys(override)) {
    const o = override[key];
    const b = Object.hasOwn(out, key) ? out[key] : undefined;
    const value = isPlainObject(o) && isPlainObject(b) ? deepMerge(b, o) : o;
    // defineProperty: a "__proto__" key stays data and never reaches the prototype.
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return out;
}
