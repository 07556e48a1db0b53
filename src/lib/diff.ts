// A field-level diff of two snapshots as JSON Pointer entries. Our own: snapshots are plain JSON
// (no dates, maps or cycles), we want RFC 6901 pointers (microdiff answers key arrays and would
// be a new dependency for twenty lines), and blocks compare by their id, not their position, so
// inserting one block reads as one addition rather than a change to every block after it.
import { isPlainObject } from "./merge";

export interface Change {
  readonly path: string;
  readonly before?: unknown;
  readonly after?: unknown;
}

const segment = (k: string): string => k.replace(/~/g, "~0").replace(/\//g, "~1");

/** Array items keyed by `id` (blocks) or `locale` (translations) when every item has one: compared by that key. */
const keyOf = (items: readonly unknown[]): string | null => {
  for (const key of ["id", "locale"]) if (items.length > 0 && items.every((v) => isPlainObject(v) && typeof v[key] === "string")) return key;
  return null;
};

export function diffJson(before: unknown, after: unknown, at = ""): Change[] {
  if (Object.is(before, after)) return [];
  if (Array.isArray(before) && Array.isArray(after)) {
    const key = keyOf(before) ?? keyOf(after);
    if (key && (before.length === 0 || keyOf(before) === key) && (after.length === 0 || keyOf(after) === key)) {
      const index = (items: unknown[]) => new Map(items.map((v, i) => [String((v as Record<string, unknown>)[key]), { v, i }]));
      const [a, b] = [index(before), index(after)];
      const out: Change[] = [];
      // Paths name each item by its position in the later snapshot (the earlier one for removals).
      for (const [k, { v, i }] of b) out.push(...diffJson(a.get(k)?.v, v, `${at}/${i}`));
      for (const [k, { v, i }] of a) if (!b.has(k)) out.push({ path: `${at}/${i}`, before: v });
      const moved = [...b].some(([k, { i }]) => a.has(k) && a.get(k)?.i !== i);
      // A new order is one entry at the array itself, its items' keys before and after.
      if (moved) out.push({ path: at, before: [...a.keys()], after: [...b.keys()] });
      return out;
    }
    const out: Change[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) out.push(...diffJson(before[i], after[i], `${at}/${i}`));
    return out;
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...keys].flatMap((k) => diffJson(before[k], after[k], `${at}/${segment(k)}`));
  }
  if (before === undefined) return [{ path: at, after }];
  if (after === undefined) return [{ path: at, before }];
  return [{ path: at, before, after }];
}
