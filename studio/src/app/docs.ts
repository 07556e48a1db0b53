// Converting between the API's shapes and the form's EditorDoc; local drafts; a field-level diff.
import type { EditorBlock, EditorDoc, Violation } from "./formApi";
import type { Actor, NodeWithBlocks, Translation } from "./types";

export function docOfNode(node: NodeWithBlocks): EditorDoc {
  return {
    title: node.title,
    slug: node.slug,
    fields: { ...(node.fields ?? {}) },
    blocks: node.blocks.map((b) => ({ id: b.id, type: b.type, data: { ...(b.data ?? {}) } })),
  };
}

/** A translation as the form holds it: meta's title and slug, the field overrides, the base blocks each with its overrides as data. */
export function docOfTranslation(node: NodeWithBlocks, tr: Translation | null): EditorDoc {
  const meta = (tr?.meta ?? {}) as Record<string, unknown>;
  return {
    title: typeof meta.title === "string" ? meta.title : "",
    slug: typeof meta.slug === "string" ? meta.slug : "",
    fields: { ...((tr?.fields ?? {}) as Record<string, unknown>) },
    blocks: node.blocks.map((b) => ({ id: b.id, type: b.type, data: { ...((tr?.blocks?.[b.id] ?? {}) as Record<string, unknown>) } })),
  };
}

/** The body of PATCH /nodes/{id}. */
export function nodeBody(doc: EditorDoc) {
  return {
    title: doc.title,
    slug: doc.slug,
    fields: doc.fields,
    blocks: doc.blocks.map((b: EditorBlock) => (b.id ? { id: b.id, type: b.type, data: b.data } : { type: b.type, data: b.data })),
  };
}

const isEmpty = (v: unknown) => v === undefined || v === null || (typeof v === "object" && Object.keys(v as object).length === 0);

/** The body of PUT /translations/{locale}: meta keeps what the form does not edit (description, og_image…). */
export function translationBody(doc: EditorDoc, previous: Translation | null) {
  const meta: Record<string, unknown> = { ...((previous?.meta ?? {}) as Record<string, unknown>) };
  for (const key of ["title", "slug"] as const) {
    if (doc[key].trim()) meta[key] = doc[key];
    else delete meta[key];
  }
  const blocks: Record<string, unknown> = {};
  for (const b of doc.blocks) if (b.id && !isEmpty(b.data)) blocks[b.id] = b.data;
  const fields = Object.fromEntries(Object.entries(doc.fields).filter(([, v]) => v !== undefined));
  return { meta, fields, blocks };
}

/** A translation write's violations, pointed at the form's doc (/meta/title → /title, /blocks/<id>/x → /blocks/<n>/data/x). */
export function translationViolations(violations: Violation[], doc: EditorDoc): Violation[] {
  return violations.map((v) => {
    let pointer = v.pointer.replace(/^\/meta\/(title|slug)\b/, "/$1");
    const m = pointer.match(/^\/blocks\/([0-9a-f-]{36})(\/.*)?$/);
    if (m) {
      const index = doc.blocks.findIndex((b) => b.id === m[1]);
      if (index >= 0) pointer = `/blocks/${index}/data${m[2] ?? ""}`;
    }
    return { ...v, pointer };
  });
}

// ---- Local drafts: unsaved work kept in this browser until it is saved or discarded.

export interface LocalDraft {
  revision: number;
  saved_at: string;
  doc: EditorDoc;
}

export const draftKey = (project: string, node: string, locale: string | null) => `cms-studio:draft:${project}:${node}:${locale ?? "base"}`;

export function readDraft(key: string): LocalDraft | null {
  try {
    const raw = window.localStorage.getItem(key);
    if (!raw) return null;
    const d = JSON.parse(raw) as LocalDraft;
    if (typeof d?.revision !== "number" || !d.doc || typeof d.doc.title !== "string" || !Array.isArray(d.doc.blocks)) return null;
    return d;
  } catch {
    return null;
  }
}

export function writeDraft(key: string, draft: LocalDraft): void {
  try {
    window.localStorage.setItem(key, JSON.stringify(draft));
  } catch {
    // Storage full or disabled: the beforeunload prompt still guards the work.
  }
}

export function clearDraft(key: string): void {
  try {
    window.localStorage.removeItem(key);
  } catch {
    // nothing to clear
  }
}

// ---- Who did something, in words.

export function actorName(actor: Actor | Record<string, unknown> | null | undefined): string {
  if (!actor) return "someone";
  const a = actor as Actor;
  return a.user?.email ?? a.name ?? (a.kind === "system" ? "the system" : a.kind === "scheduler" ? "the scheduler" : (a.kind ?? "someone").replace(/_/g, " "));
}

const OPERATION_WORDS: Record<string, string> = {
  update_node: "edited the page",
  set_blocks: "changed the blocks",
  reorder_blocks: "reordered the blocks",
  publish_node: "published",
  unpublish_node: "unpublished",
  archive_node: "archived",
  restore_node: "restored",
  discard_changes: "discarded unpublished changes",
  upsert_translation: "edited a translation",
  translate_node: "machine-translated",
  delete_translation: "deleted a translation",
  restore_revision: "restored an older revision",
  schedule_node: "scheduled publication",
};
export const operationWords = (op: string) => OPERATION_WORDS[op] ?? op.replace(/_/g, " ");

// ---- A field-level diff between the published version and the working copy, by JSON Pointer.

export type ChangeKind = "changed" | "added" | "removed" | "moved";

export interface DiffRow {
  /** A JSON Pointer into the working copy (a removed block: into the published version). */
  path: string;
  change: ChangeKind;
  before: unknown;
  after: unknown;
}

const esc = (k: string) => k.replace(/~/g, "~0").replace(/\//g, "~1");

/** Leaf-level differences between two JSON values; a value only on one side is added or removed. */
function diffValues(before: unknown, after: unknown, path: string): DiffRow[] {
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  const bothObjects = before && after && typeof before === "object" && typeof after === "object" && Array.isArray(before) === Array.isArray(after);
  if (!bothObjects) {
    const change: ChangeKind = before === undefined ? "added" : after === undefined ? "removed" : "changed";
    return [{ path: path || "/", change, before, after }];
  }
  const b = before as Record<string, unknown>;
  const a = after as Record<string, unknown>;
  const keys = Array.isArray(before)
    ? Array.from({ length: Math.max((before as unknown[]).length, (after as unknown[]).length) }, (_, i) => String(i))
    : [...new Set([...Object.keys(b), ...Object.keys(a)])];
  return keys.flatMap((k) => diffValues(b[k], a[k], `${path}/${esc(k)}`));
}

/** What the published version's read answers (GET /nodes/{id}/published), as far as the diff needs. */
export interface PublishedDoc {
  title: string;
  slug: string;
  fields: unknown;
  blocks: Array<{ id: string; type: string; data: unknown }>;
}

/**
 * The differences from the published version to the working copy: title, slug, each field, and the
 * blocks matched by id (a block's data field by field, a block added, removed or moved).
 */
export function diffVersions(published: PublishedDoc, working: EditorDoc): DiffRow[] {
  const rows: DiffRow[] = [...diffValues(published.title, working.title, "/title"), ...diffValues(published.slug, working.slug, "/slug")];
  rows.push(...diffValues(published.fields ?? {}, working.fields, "/fields"));
  const publishedIndex = new Map(published.blocks.map((b, i) => [b.id, i]));
  const kept = new Set<string>();
  working.blocks.forEach((b, i) => {
    const j = b.id === undefined ? undefined : publishedIndex.get(b.id);
    const old = j === undefined ? undefined : published.blocks[j];
    if (j === undefined || !old || !b.id) {
      rows.push({ path: `/blocks/${i}`, change: "added", before: undefined, after: { type: b.type, data: b.data } });
      return;
    }
    kept.add(b.id);
    if (j !== i) rows.push({ path: `/blocks/${i}`, change: "moved", before: `block ${j + 1} (${old.type})`, after: `block ${i + 1} (${b.type})` });
    if (old.type !== b.type) rows.push({ path: `/blocks/${i}/type`, change: "changed", before: old.type, after: b.type });
    rows.push(...diffValues(old.data ?? {}, b.data, `/blocks/${i}/data`));
  });
  published.blocks.forEach((b, j) => {
    if (!kept.has(b.id)) rows.push({ path: `/blocks/${j}`, change: "removed", before: { type: b.type, data: b.data }, after: undefined });
  });
  return rows;
}

/** A value as text for the diff (never HTML). */
export function valueText(v: unknown): string {
  if (v === undefined) return "(none)";
  if (typeof v === "string") return v;
  return JSON.stringify(v, null, 2);
}
