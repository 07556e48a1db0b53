// Machine translation of a whole node: the node's title, SEO description, and the prose of its fields and blocks,
// machine-translated with the project's provider and stored as a draft translation for review. Where the
// project's content model declares the node's or a block's type, its translatable properties are what is
// translated (./model-leaves.ts); the key-name heuristic below is only for free-form data.

import { eq } from "drizzle-orm";
import { type Project, projects } from "../../db/schema";
import { translateText } from "../ai/service";
import { findTranslation, getNodeWithBlocks, projectLocale } from "../content/service";
import type { AppDeps } from "../core/deps";
import type { OperationContext } from "../core/operation";
import { AppError } from "../errors";
import { deepMerge, isPlainObject } from "../lib/merge";
import { compiledModel } from "../model/cache";
import type { WriteContext } from "../write/context";
import { type ModelLeaf, type Path, translatableLeaves } from "./model-leaves";
import { translationToWire, upsertTranslation } from "./service";

const MAX_NODE_FIELDS = 200;
// Keys whose string values are identifiers, links, styling or code, never prose.
const SKIP_KEY_RE =
  /^(id|.*_id|.*Id|type|kind|variant|style|class|classname|slug|href|url|.*_url|.*Url|src|srcset|image|icon|color|colour|anchor|target|rel|lang|locale|format|layout|align|theme|size|width|height|key|ref|path|email|tel|phone|embed|video|code|language|mime|mimetype)$/i;
const FIELD_UNSAFE_RE = /[^A-Za-z0-9_.:[\]-]/g;
const NOT_PROSE_RE = /^(\s*|[a-z][a-z0-9+.-]*:\/\/\S*|mailto:\S+|\/\S*|#[0-9a-f]{3,8}|[\d\s.,:%+-]+|[0-9a-f]{8}-[0-9a-f-]{27}|\S+@\S+\.\S+)$/i;

type Job = { field: string; text: string; format?: ModelLeaf["format"]; apply(t: string): void };

export async function translateNode(
  deps: AppDeps,
  ctx: WriteContext,
  project: Project,
  input: { node_id: string; locale: string; provider_id?: string },
  now: Date,
  progress?: OperationContext<unknown>["progress"],
) {
  const to = projectLocale(project, input.locale);
  if (to === project.defaultLocale) throw new AppError("invalid_locale", `"${to}" is the project's default locale, the language the node is written in`);
  const node = await getNodeWithBlocks(deps.db, project.id, input.node_id);
  const [current] = await deps.db.select({ modelVersion: projects.modelVersion }).from(projects).where(eq(projects.id, project.id));
  const model = await compiledModel(deps.db, project.id, current?.modelVersion ?? 0);

  const meta: Record<string, unknown> = {};
  const fields: Record<string, unknown> = {};
  const overrides: Record<string, Record<string, unknown>> = {};
  const description = node.seo.description;
  // The model's translatable properties where it declares the type; the key-name heuristic elsewhere.
  const leaves = (schema: Record<string, unknown> | undefined, data: Record<string, unknown>): ModelLeaf[] =>
    schema ? translatableLeaves(schema, data) : textLeaves(data, []).map((l) => ({ ...l, format: null }));
  const jobsOf = (prefix: Path, base: Record<string, unknown>, target: () => Record<string, unknown>, found: ModelLeaf[]): Job[] =>
    found.map((leaf) => ({ field: fieldName([...prefix, ...leaf.path]), text: leaf.text, format: leaf.format, apply: (t: string) => setOverride(target(), base, leaf.path, t) }));
  const jobs: Job[] = [
    { field: "title", text: node.title, apply: (t) => (meta.title = t) },
    ...(typeof description === "string" && !NOT_PROSE_RE.test(description) ? [{ field: "seo.description", text: description, apply: (t: string) => (meta.description = t) }] : []),
    ...jobsOf(["fields"], node.fields, () => fields, leaves(model.nodeType(node.type)?.fields, node.fields)),
    ...node.blocks.flatMap((b) => jobsOf(["blocks", b.id], b.data, () => (overrides[b.id] ??= {}), leaves(model.blockType(b.type)?.schema, b.data))),
  ];
  if (jobs.length > MAX_NODE_FIELDS) {
    throw new AppError("invalid_request", `this node has ${jobs.length} text fields; translate_node handles at most ${MAX_NODE_FIELDS} (use translate_text and upsert_translation)`);
  }

  let last: Awaited<ReturnType<typeof translateText>> | undefined;
  // One field at a time: a node never holds more than one of the project's translation slots.
  for (const [i, job] of jobs.entries()) {
    last = await withSlotRetry(() => translateText(deps, project, { provider_id: input.provider_id, from: project.defaultLocale, to, text: job.text, field: job.field, format: job.format ?? null }));
    job.apply(last.translation);
    await progress?.(i + 1, jobs.length, `translated ${job.field} into ${to} (${i + 1} of ${jobs.length})`);
  }

  const existing = await findTranslation(deps.db, node.id, to);
  const blockIds = new Set(node.blocks.map((b) => b.id));
  const blocks = Object.fromEntries(Object.entries(existing?.blocks ?? {}).filter(([id]) => blockIds.has(id)));
  for (const [id, o] of Object.entries(overrides)) blocks[id] = deepMerge(blocks[id] ?? {}, o);
  // Machine output replaces the translated fields and keeps the rest (a localised slug, say); it awaits review as a draft.
  const translation = translationToWire(
    await upsertTranslation(deps.db, ctx, project, node.id, to, { meta: { ...existing?.meta, ...meta }, fields: deepMerge(existing?.fields ?? {}, fields), blocks, status: "draft" }, now),
  );
  return { translation, translated_fields: jobs.map((j) => ({ field: j.field, chars: [...j.text].length })), provider: last?.provider ?? null, model: last?.model ?? null };
}

/** Free-form data: every string that reads as prose, under a key that does not name an identifier, link or style. */
function textLeaves(value: unknown, path: Path): Array<{ path: Path; text: string }> {
  if (typeof value === "string") {
    const key = path.findLast((p) => typeof p === "string");
    if (typeof key === "string" && SKIP_KEY_RE.test(key)) return [];
    return NOT_PROSE_RE.test(value) || !/\p{L}/u.test(value) ? [] : [{ path, text: value }];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => textLeaves(v, [...path, i]));
  if (isPlainObject(value)) return Object.entries(value).flatMap(([k, v]) => textLeaves(v, [...path, k]));
  return [];
}

const fieldName = (path: Path): string => path.join(".").replace(FIELD_UNSAFE_RE, "_").slice(0, 200);

/**
 * Writes a translated leaf into an override (a block's, or the node's fields). Overrides deep-merge
 * over objects but replace arrays, so a leaf inside an array carries the whole (copied) array with it.
 */
function setOverride(override: Record<string, unknown>, base: Record<string, unknown>, path: Path, text: string): void {
  let target: Record<string | number, unknown> = override;
  let source: unknown = base;
  const last = path[path.length - 1];
  if (last === undefined) throw new Error("a leaf lies inside its block's data or the node's fields");
  for (const key of path.slice(0, -1)) {
    source = ownValue(source, key);
    // Inside a copied array every element already exists; above it, objects stay partial.
    let next = ownValue(target, key);
    if (next === undefined) setOwn(target, key, (next = Array.isArray(source) ? structuredClone(source) : {}));
    target = next as Record<string | number, unknown>;
  }
  setOwn(target, last, text);
}

// Keys come from stored block data: a "__proto__" key is read and written as the data it is, never
// as the prototype (reading it through `[]` would hand back Object.prototype to write into).
const ownValue = (holder: unknown, key: string | number): unknown =>
  holder !== null && typeof holder === "object" && Object.hasOwn(holder, key) ? (holder as Record<string | number, unknown>)[key] : undefined;
const setOwn = (holder: object, key: string | number, value: unknown): void => {
  Object.defineProperty(holder, key, { value, enumerable: true, writable: true, configurable: true });
};

const withSlotRetry = <T>(fn: () => Promise<T>, attempt = 0): Promise<T> =>
  fn().catch(async (err) => {
    if (!(err instanceof AppError && err.code === "rate_limited") || attempt >= 5) throw err;
    await new Promise((resolve) => setTimeout(resolve, 250 * (attempt + 1)));
    return withSlotRetry(fn, attempt + 1);
  });
