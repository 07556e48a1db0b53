// Machine translation of a whole node: its translatable units (src/model/units.ts: the title, SEO description, and the
// prose of its fields and blocks), machine-translated with the project's provider and stored as a draft
// translation for review, each unit's origin recorded as the machine's.

import { eq } from "drizzle-orm";
import { type Project, projects } from "../../db/schema";
import { translateText } from "../ai/service";
import { findTranslation, getNodeWithBlocks, projectLocale } from "../content/service";
import type { AppDeps } from "../core/deps";
import type { OperationContext } from "../core/operation";
import { AppError } from "../errors";
import { compiledModel } from "../model/cache";
import { setTranslatedText, sourceUnits, type TranslationValues } from "../model/units";
import type { WriteContext } from "../write/context";
import { translationToWire, upsertTranslation } from "./service";

const MAX_NODE_FIELDS = 200;
const FIELD_UNSAFE_RE = /[^A-Za-z0-9_.:[\]-]/g;

/** A unit's name as the prompt and the answer give it: "title", "seo.description", "fields.summary", "blocks.{id}.heading". */
const fieldName = (pointer: string): string =>
  pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .filter((s, i, all) => !(i === 2 && all[0] === "blocks" && s === "data"))
    .join(".")
    .replace(FIELD_UNSAFE_RE, "_")
    .slice(0, 200);

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
  const units = sourceUnits(node, model);
  if (units.length > MAX_NODE_FIELDS) {
    throw new AppError("invalid_request", `this node has ${units.length} text fields; translate_node handles at most ${MAX_NODE_FIELDS} (use translate_text and upsert_translation)`);
  }

  const existing = await findTranslation(deps.db, node.id, to);
  const blockIds = new Set(node.blocks.map((b) => b.id));
  // Machine output replaces the translated units and keeps the rest (a localised slug, say); it awaits review as a draft.
  const values: TranslationValues = structuredClone({
    meta: { ...existing?.meta },
    fields: existing?.fields ?? {},
    blocks: Object.fromEntries(Object.entries(existing?.blocks ?? {}).filter(([id]) => blockIds.has(id))),
  });
  let last: Awaited<ReturnType<typeof translateText>> | undefined;
  // One unit at a time: a node never holds more than one of the project's translation slots.
  for (const [i, unit] of units.entries()) {
    const field = fieldName(unit.pointer);
    last = await withSlotRetry(() => translateText(deps, project, { provider_id: input.provider_id, from: project.defaultLocale, to, text: unit.text, field, format: unit.format }));
    setTranslatedText(values, node, unit.pointer, last.translation);
    await progress?.(i + 1, units.length, `translated ${field} into ${to} (${i + 1} of ${units.length})`);
  }
  const origin = { kind: "machine" as const, provider_kind: last?.provider ?? null, model: last?.model ?? null };
  const translation = translationToWire(await upsertTranslation(deps.db, ctx, project, node.id, to, { ...values, status: "draft" }, now, false, origin));
  return { translation, translated_fields: units.map((u) => ({ field: fieldName(u.pointer), chars: [...u.text].length })), provider: last?.provider ?? null, model: last?.model ?? null };
}

const withSlotRetry = <T>(fn: () => Promise<T>, attempt = 0): Promise<T> =>
  fn().catch(async (err) => {
    if (!(err instanceof AppError && err.code === "rate_limited") || attempt >= 5) throw err;
    await new Promise((resolve) => setTimeout(resolve, 250 * (attempt + 1)));
    return withSlotRetry(fn, attempt + 1);
  });
