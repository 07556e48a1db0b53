// The translatable units of a node (docs/translation.md): each string a translation may carry,
// named by a JSON Pointer into the node (`/title`, `/seo/description`, `/fields/summary`,
// `/blocks/{blockId}/data/text`, nested paths below them), with its text, its format and the hash of
// that text. Where the content model declares the node's or a block's type, its translatable
// properties are the units (./leaves.ts); elsewhere the strings that read as prose under a key
// that names no identifier, link or style. Machine translation, the per-field status, stale
// detection and the files translators use all read units from here.
import { createHash } from "node:crypto";
import { isPlainObject } from "../lib/merge";
import { type CompiledModel, pointerSegment } from "./compile";
import { type ModelLeaf, type Path, translatableLeaves } from "./leaves";

/** The parts of a node a unit comes from: a snapshot, a wire node or a row with its blocks. */
export interface UnitSource {
  readonly title: string;
  readonly type: string;
  readonly seo?: unknown;
  readonly fields?: unknown;
  readonly blocks?: ReadonlyArray<{ readonly id: string; readonly type: string; readonly data?: unknown }>;
}

export interface Unit {
  readonly pointer: string;
  readonly text: string;
  readonly format: ModelLeaf["format"];
  /** SHA-256 of the text, hex: a unit's source hash. */
  readonly hash: string;
  /** The content model's maxLength for it (a translation must keep it too). */
  readonly maxLength: number | null;
}

/** Keys whose string values are identifiers, links, styling or code, never prose. */
const SKIP_KEY_RE =
  /^(id|.*_id|.*Id|type|kind|variant|style|class|classname|slug|href|url|.*_url|.*Url|src|srcset|image|icon|color|colour|anchor|target|rel|lang|locale|format|layout|align|theme|size|width|height|key|ref|path|email|tel|phone|embed|video|code|language|mime|mimetype)$/i;
const NOT_PROSE_RE = /^(\s*|[a-z][a-z0-9+.-]*:\/\/\S*|mailto:\S+|\/\S*|#[0-9a-f]{3,8}|[\d\s.,:%+-]+|[0-9a-f]{8}-[0-9a-f-]{27}|\S+@\S+\.\S+)$/i;

/** SHA-256 of the text, hex (node:crypto: native on Bun, Node and Deno; every node write with translations hashes its units). */
export const textHash = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

/** The JSON Pointer of a path in a node (`["fields", "tags", 0]` → `/fields/tags/0`). */
export const pointerOf = (path: Path): string => {
  let out = "";
  for (const p of path) {
    const s = String(p);
    out += `/${s.includes("~") || s.includes("/") ? pointerSegment(s) : s}`;
  }
  return out;
};

/** Free-form data: every string that reads as prose, under a key that does not name an identifier, link or style. */
function textLeaves(value: unknown, path: Path): ModelLeaf[] {
  if (typeof value === "string") {
    const key = path.findLast((p) => typeof p === "string");
    if (typeof key === "string" && SKIP_KEY_RE.test(key)) return [];
    return NOT_PROSE_RE.test(value) || !/\p{L}/u.test(value) ? [] : [{ path, text: value, format: null }];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => textLeaves(v, [...path, i]));
  if (isPlainObject(value)) return Object.entries(value).flatMap(([k, v]) => textLeaves(v, [...path, k]));
  return [];
}

/** The model's translatable properties where it declares the type; the key-name heuristic elsewhere. */
const leavesOf = (schema: Record<string, unknown> | undefined, data: unknown): ModelLeaf[] => {
  const value = isPlainObject(data) ? data : {};
  return schema ? translatableLeaves(schema, value) : textLeaves(value, []);
};

/** Calls `add` for each translatable unit of a node, in the order an editor reads them: title, description, fields, blocks. No model: the heuristic everywhere. */
function eachUnit(node: UnitSource, model: CompiledModel | null, add: (path: Path, text: string, format: ModelLeaf["format"], maxLength?: number) => void): void {
  if (node.title.trim() !== "") add(["title"], node.title, null, 500);
  const description = isPlainObject(node.seo) ? node.seo.description : undefined;
  if (typeof description === "string" && !NOT_PROSE_RE.test(description)) add(["seo", "description"], description, null, 1000);
  for (const leaf of leavesOf(model?.nodeType(node.type)?.fields, node.fields)) add(["fields", ...leaf.path], leaf.text, leaf.format, leaf.maxLength);
  for (const b of node.blocks ?? []) for (const leaf of leavesOf(model?.blockType(b.type)?.schema, b.data)) add(["blocks", b.id, "data", ...leaf.path], leaf.text, leaf.format, leaf.maxLength);
}

/** Every translatable unit of a node, in the order an editor reads them: title, description, fields, blocks. */
export function sourceUnits(node: UnitSource, model: CompiledModel): Unit[] {
  const out: Unit[] = [];
  eachUnit(node, model, (path, text, format, maxLength) => out.push({ pointer: pointerOf(path), text, format, hash: textHash(text), maxLength: maxLength ?? null }));
  return out;
}

/** Where each translatable unit of a node sits (sourceUnits' order, without texts or hashes): what delivery's fallbacks are named by. */
export function unitPaths(node: UnitSource, model: CompiledModel | null): Path[] {
  const out: Path[] = [];
  eachUnit(node, model, (path) => out.push(path));
  return out;
}

/** A translation's working copy as units read and write it. */
export interface TranslationValues {
  meta: Record<string, unknown>;
  fields: Record<string, unknown>;
  blocks: Record<string, Record<string, unknown>>;
}

const unescapeSegment = (s: string): string => s.replace(/~1/g, "/").replace(/~0/g, "~");
const segmentsOf = (pointer: string): string[] => pointer.split("/").slice(1).map(unescapeSegment);

/** Where a unit's translated text lives in a translation: the holder object and the path in it. */
function locate(pointer: string): { root: "meta" | "fields" | "block"; block?: string; path: string[] } | null {
  const [head, ...rest] = segmentsOf(pointer);
  if (head === "title" && rest.length === 0) return { root: "meta", path: ["title"] };
  if (head === "seo" && rest.length === 1 && rest[0] === "description") return { root: "meta", path: ["description"] };
  if (head === "fields" && rest.length > 0) return { root: "fields", path: rest };
  if (head === "blocks" && rest.length > 2 && rest[1] === "data") return { root: "block", block: rest[0], path: rest.slice(2) };
  return null;
}

const own = (holder: unknown, key: string): unknown => (holder !== null && typeof holder === "object" && Object.hasOwn(holder, key) ? (holder as Record<string, unknown>)[key] : undefined);

/** The translated text of a unit, or undefined when the translation does not carry it. */
export function translatedText(tr: TranslationValues, pointer: string): string | undefined {
  const at = locate(pointer);
  if (!at) return undefined;
  let v: unknown = at.root === "meta" ? tr.meta : at.root === "fields" ? tr.fields : own(tr.blocks, at.block ?? "");
  for (const key of at.path) v = own(v, key);
  return typeof v === "string" ? v : undefined;
}

/** Every unit a translation carries: pointer → its text. */
export function translatedUnits(tr: TranslationValues, units: readonly Unit[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const u of units) {
    const t = translatedText(tr, u.pointer);
    if (t !== undefined) out.set(u.pointer, t);
  }
  return out;
}

const setOwn = (holder: object, key: string | number, value: unknown): void => {
  Object.defineProperty(holder, key, { value, enumerable: true, writable: true, configurable: true });
};

/**
 * Writes a unit's translated text into a translation (a copy's objects are created as needed).
 * Overrides deep-merge over objects but replace arrays, so a unit inside an array carries the whole
 * (copied) array of the source with it. `source` is the node's value under the same holder.
 */
export function setTranslatedText(tr: TranslationValues, node: UnitSource, pointer: string, text: string): void {
  const at = locate(pointer);
  if (!at) throw new Error(`not a translatable unit: ${pointer}`);
  let target: Record<string | number, unknown>;
  let source: unknown;
  if (at.root === "meta") {
    target = tr.meta;
    source = {};
  } else if (at.root === "fields") {
    target = tr.fields;
    source = node.fields;
  } else {
    const id = at.block ?? "";
    if (!isPlainObject(own(tr.blocks, id))) setOwn(tr.blocks, id, {});
    target = own(tr.blocks, id) as Record<string, unknown>;
    source = own(
      (node.blocks ?? []).find((b) => b.id === id),
      "data",
    );
  }
  const last = at.path[at.path.length - 1];
  if (last === undefined) throw new Error(`not a translatable unit: ${pointer}`);
  for (const raw of at.path.slice(0, -1)) {
    const key: string | number = Array.isArray(target) ? Number(raw) : raw;
    source = own(source, String(raw));
    let next = own(target, String(raw));
    if (next === undefined) setOwn(target, key, (next = Array.isArray(source) ? structuredClone(source) : {}));
    target = next as Record<string | number, unknown>;
  }
  setOwn(target, Array.isArray(target) ? Number(last) : last, text);
}
