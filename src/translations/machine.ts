// Machine translation of a whole node: its translatable units (src/model/units.ts: the title, SEO description, and the
// prose of its fields and blocks), machine-translated with the project's provider and stored as a draft
// translation for review, each unit's origin recorded as the machine's.

import { eq } from "drizzle-orm";
import { type Project, projects, type TranslationUnitRow } from "../../db/schema";
import { houseRules, type MachineAnswer, machineTranslate } from "../ai/pipeline";
import { findTranslation, getNodeWithBlocks, projectLocale } from "../content/service";
import type { AppDeps } from "../core/deps";
import type { OperationContext } from "../core/operation";
import { AppError } from "../errors";
import { compiledModel } from "../model/cache";
import { setTranslatedText, sourceUnits, type TranslationValues, translatedUnits, type Unit } from "../model/units";
import type { WriteContext } from "../write/context";
import { translationToWire, upsertTranslation } from "./service";
import { type UnitState, unitRows } from "./status";

const MAX_NODE_FIELDS = 200;
const FIELD_UNSAFE_RE = /[^A-Za-z0-9_.:[\]-]/g;

/** A unit's name as the prompt and the answer give it: "title", "seo.description", "fields.summary", "blocks.{id}.heading". */
export const fieldName = (pointer: string): string =>
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
  input: { node_id: string; locale: string; provider_id?: string; force?: boolean },
  now: Date,
  progress?: OperationContext<unknown>["progress"],
) {
  const to = projectLocale(project, input.locale);
  if (to === project.defaultLocale) throw new AppError("invalid_locale", `"${to}" is the project's default locale, the language the node is written in`);
  const node = await getNodeWithBlocks(deps.db, project.id, input.node_id);
  const [current] = await deps.db.select({ modelVersion: projects.modelVersion }).from(projects).where(eq(projects.id, project.id));
  const model = await compiledModel(deps.db, project.id, current?.modelVersion ?? 0);
  const units = sourceUnits(node, model);
  const [existing, rows] = await Promise.all([findTranslation(deps.db, node.id, to), unitRows(deps.db, node.id, to)]);
  const carried = existing ? translatedUnits(existing, units) : new Map<string, string>();
  const plan = units.map((u) => ({
    unit: u,
    skip: skipReason(
      u,
      carried.has(u.pointer),
      rows.find((r) => r.pointer === u.pointer),
      input.force === true,
    ),
  }));
  const todo = plan.filter((p) => p.skip === null).map((p) => p.unit);
  if (todo.length > MAX_NODE_FIELDS) {
    throw new AppError("invalid_request", `this node has ${todo.length} text fields to translate; translate_node handles at most ${MAX_NODE_FIELDS} (use a translation job)`);
  }
  const skipped = plan.flatMap((p) => (p.skip === null ? [] : [{ field: fieldName(p.unit.pointer), pointer: p.unit.pointer, reason: p.skip }]));

  const blockIds = new Set(node.blocks.map((b) => b.id));
  // Machine output replaces the translated units and keeps the rest (a localised slug, a person's text); it awaits review as a draft.
  const values: TranslationValues = structuredClone({
    meta: { ...existing?.meta },
    fields: existing?.fields ?? {},
    blocks: Object.fromEntries(Object.entries(existing?.blocks ?? {}).filter(([id]) => blockIds.has(id))),
  });
  const rules = todo.length > 0 ? await houseRules(deps.db, project.id, to) : { terms: [], style: null };
  const states = new Map<string, UnitState>();
  const translated: Array<{ field: string; pointer: string; chars: number; status: MachineAnswer["status"]; from_memory: boolean; failures: string[] }> = [];
  let last: { provider: string | null; model: string | null } = { provider: null, model: null };
  // One unit at a time: a node never holds more than one of the project's translation slots.
  for (const [i, unit] of todo.entries()) {
    const field = fieldName(unit.pointer);
    const answer = await withSlotRetry(() =>
      machineTranslate(
        deps,
        project,
        { provider_id: input.provider_id, from: project.defaultLocale, to, text: unit.text, field, format: unit.format, maxLength: unit.maxLength, memory: input.force !== true },
        rules,
      ),
    );
    // An answer longer than the model allows cannot be stored at all (the model refuses it): the field keeps what it had.
    const fits = unit.maxLength === null || [...answer.text].length <= unit.maxLength;
    if (fits) {
      setTranslatedText(values, node, unit.pointer, answer.text);
      states.set(unit.pointer, { status: answer.status, origin: answer.origin });
    }
    if (answer.origin.kind === "machine") last = { provider: answer.origin.provider_kind ?? null, model: answer.origin.model ?? null };
    translated.push({ field, pointer: unit.pointer, chars: [...unit.text].length, status: answer.status, from_memory: answer.calls === 0, failures: [...answer.failures] });
    await progress?.(i + 1, todo.length, `translated ${field} into ${to} (${i + 1} of ${todo.length})`);
  }
  const stored =
    states.size === 0 && existing
      ? existing
      : await upsertTranslation(deps.db, ctx, project, node.id, to, { ...values, status: "draft" }, now, false, { kind: "machine", provider_kind: last.provider, model: last.model }, (p) =>
          states.get(p),
        );
  return { translation: translationToWire(stored), translated_fields: translated, skipped, provider: last.provider, model: last.model };
}

/**
 * Why a unit is not sent (null: it is): a person's text (written, approved or published) is never
 * overwritten without `force`; machine text made from the source as it is now needs no new call.
 */
export function skipReason(unit: Unit, carried: boolean, row: TranslationUnitRow | undefined, force: boolean): string | null {
  if (!carried || force) return null;
  if (!row) return "translated before its state was recorded: kept (force re-translates it)";
  if (row.humanEdited || row.status === "approved" || row.status === "published") return `${row.humanEdited ? "written by a person" : row.status}: kept (force re-translates it)`;
  if (row.status === "stale" || row.status === "needs_review" || row.sourceHash !== unit.hash) return null;
  return "already translated from this source";
}

const withSlotRetry = <T>(fn: () => Promise<T>, attempt = 0): Promise<T> =>
  fn().catch(async (err) => {
    if (!(err instanceof AppError && err.code === "rate_limited") || attempt >= 5) throw err;
    await new Promise((resolve) => setTimeout(resolve, 250 * (attempt + 1)));
    return withSlotRetry(fn, attempt + 1);
  });
