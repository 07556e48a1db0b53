// JSON Pointer (RFC 6901) over plain JSON values, with immutable updates that copy only the path.

const parsed = new Map<string, readonly string[]>();

/** The reference tokens of `pointer`; `""` is the whole document. Parsed once per distinct pointer. */
export function parsePointer(pointer: string): readonly string[] {
  const hit = parsed.get(pointer);
  if (hit) return hit;
  if (pointer !== "" && !pointer.startsWith("/")) throw new Error(`not a JSON Pointer: ${pointer}`);
  const tokens = pointer === "" ? [] : pointer.slice(1).split("/").map(unescapeSegment);
  if (parsed.size > 50_000) parsed.clear();
  parsed.set(pointer, tokens);
  return tokens;
}

/** RFC 6901 §3: `~` is written `~0` and `/` is written `~1` inside a token. */
export const escapeSegment = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");
const unescapeSegment = (token: string): string => token.replace(/~1/g, "/").replace(/~0/g, "~");

export const childPointer = (parent: string, segment: string | number): string => `${parent}/${escapeSegment(String(segment))}`;

/** The pointer one level up, or null for the whole document. */
export function parentPointer(pointer: string): string | null {
  if (pointer === "") return null;
  return pointer.slice(0, pointer.lastIndexOf("/"));
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function getIn(root: unknown, tokens: readonly string[]): unknown {
  let at: unknown = root;
  for (const token of tokens) {
    if (Array.isArray(at)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
      at = at[Number(token)];
    } else if (isRecord(at)) {
      at = Object.hasOwn(at, token) ? at[token] : undefined;
    } else {
      return undefined;
    }
  }
  return at;
}

/**
 * `root` with `value` at `tokens`, copying each container on the path and sharing everything else.
 * A missing or non-container parent becomes an object; `-` appends to an array; `undefined` removes
 * an object's key (the JSON that is sent has no such key either).
 */
export function setIn(root: unknown, tokens: readonly string[], value: unknown, depth = 0): unknown {
  if (depth === tokens.length) return value;
  const token = tokens[depth] as string;
  if (Array.isArray(root)) {
    const index = token === "-" ? root.length : Number(token);
    if (!Number.isInteger(index) || index < 0 || index > root.length) throw new Error(`no array index ${token} in a list of ${root.length}`);
    const next = root.slice();
    next[index] = setIn(root[index], tokens, value, depth + 1);
    return next;
  }
  const parent = isRecord(root) ? root : {};
  const child = setIn(parent[token], tokens, value, depth + 1);
  if (child === undefined) {
    if (!Object.hasOwn(parent, token)) return parent;
    const { [token]: _removed, ...rest } = parent;
    return rest;
  }
  return { ...parent, [token]: child };
}

/** Structural equality of JSON values; shared references (most of an immutable update) answer at once. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = Object.keys(a).filter((k) => a[k] !== undefined);
  if (keys.length !== Object.keys(b).filter((k) => b[k] !== undefined).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}
