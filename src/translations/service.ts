import { asc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { type Project, translations, type UnitOrigin } from "../../db/schema";
import { publishTranslationVersion, unpublishTranslationVersion } from "../content/publish";
import { findTranslation, getBlocks, getNode, projectLocale } from "../content/service";
import { AppError, notFound } from "../errors";
import { uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { checkSeoImage } from "../media/seo-image";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import type { TranslationOut } from "./model";
import { fieldStatuses, originOf, recordUnits, type UnitState } from "./status";

export type Translation = typeof translations.$inferSelect;

export const translationToWire = (tr: Translation): z.output<typeof TranslationOut> => ({
  id: tr.id,
  node_id: tr.nodeId,
  locale: tr.locale,
  meta: tr.meta,
  fields: tr.fields,
  blocks: tr.blocks,
  status: tr.status,
  state: tr.status === "published" && tr.changed ? "changed" : tr.status,
  publish_at: tr.publishAt?.toISOString() ?? null,
  unpublish_at: tr.unpublishAt?.toISOString() ?? null,
  created_at: tr.createdAt.toISOString(),
  updated_at: tr.updatedAt.toISOString(),
});

/** Translations of one node on the wire, each with its field_status. */
export async function withFieldStatus(db: Db, projectId: string, trs: readonly Translation[]): Promise<Array<z.output<typeof TranslationOut>>> {
  const first = trs[0];
  if (!first) return [];
  const statuses = await fieldStatuses(db, projectId, first.nodeId, trs);
  return trs.map((t) => ({ ...translationToWire(t), field_status: statuses.get(t.locale) }));
}

export async function listTranslations(db: Db, project: Project, nodeId: string): Promise<Translation[]> {
  const node = await getNode(db, project.id, nodeId);
  return db.select().from(translations).where(eq(translations.nodeId, node.id)).orderBy(asc(translations.locale));
}

export async function getTranslation(db: Db, project: Project, nodeId: string, locale: string): Promise<Translation> {
  const loc = projectLocale(project, locale);
  const node = await getNode(db, project.id, nodeId);
  const tr = await findTranslation(db, node.id, loc);
  if (!tr) throw notFound("translation");
  return tr;
}

export async function upsertTranslation(
  db: Db,
  ctx: WriteContext,
  project: Project,
  nodeId: string,
  locale: string,
  input: Partial<Pick<Translation, "meta" | "fields" | "blocks" | "status">>,
  now: Date,
  canPublish = false,
  origin?: UnitOrigin,
  /** Per unit (by pointer), a status or origin other than the write's (a machine answer that failed its checks, a unit from the memory, an import's state). */
  perUnit?: (pointer: string) => UnitState | undefined,
): Promise<Translation> {
  const loc = projectLocale(project, locale);
  if (loc === project.defaultLocale) throw new AppError("invalid_locale", `"${loc}" is the project's default locale: edit the node itself`);
  return contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, nodeId);
    // Its status or slug may change the node's pages (and, by a localised slug, its descendants'):
    // their last good answers go, and nothing there is known to be gone.
    w.gone(node.path);
    w.added(node.path);
    w.touched(node.id, loc);
    await checkSeoImage(tx, project.id, input.meta, "meta.og_image");
    const overrides = Object.entries(input.blocks ?? {});
    const [nodeBlocks, before] = await Promise.all([getBlocks(tx, node.id), findTranslation(tx, node.id, loc)]);
    const ids = new Set(nodeBlocks.map((b) => b.id));
    const [unknown] = overrides.find(([id]) => !ids.has(id.toLowerCase())) ?? [];
    if (unknown !== undefined) throw new AppError("invalid_request", `block ${unknown} is not a block of this node`, { field: `blocks.${unknown}` });
    // The working copy: a new translation is a draft; one with a published version keeps it (and is changed).
    const values = {
      meta: input.meta ?? {},
      fields: input.fields ?? {},
      blocks: Object.fromEntries(overrides.map(([id, data]) => [id.toLowerCase(), data])),
      updatedAt: now,
    } as const;
    const written = oneRow(
      await tx
        .insert(translations)
        .values({ id: uuidv7(now.getTime()), projectId: project.id, nodeId: node.id, locale: loc, createdAt: now, status: "draft", ...values })
        .onConflictDoUpdate({ target: [translations.nodeId, translations.locale], set: values })
        .returning(),
    );
    // status "published" publishes it, for a caller who may; for anyone else the write is a draft, whatever its input says.
    // (Its changed flag moves when the write records it: answered as it will be.)
    const publishes = input.status === "published" && canPublish;
    // Each unit's state: the text's origin and the source it was made from (src/translations/status.ts).
    await recordUnits(tx, project.id, { ...node, blocks: nodeBlocks }, loc, before ?? null, written, origin ?? originOf(ctx.actor), publishes, now, perUnit);
    if (!publishes) return { ...written, changed: written.status === "published" };
    await publishTranslationVersion(tx, w, node, loc);
    return { ...written, status: "published", changed: false };
  });
}

/** Deletes the working copy and any published version: what readers see changes only for a caller who may publish (`canPublish`). */
export async function deleteTranslation(db: Db, ctx: WriteContext, project: Project, nodeId: string, locale: string, canPublish = true): Promise<void> {
  const tr = await getTranslation(db, project, nodeId, locale);
  if (tr.status === "published" && !canPublish)
    throw new AppError(
      "insufficient_scope",
      "this translation is published: deleting it takes it off delivery, which needs content:publish (discard_changes or upsert_translation edit the working copy)",
      {
        required: ["content:publish"],
      },
    );
  await contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, tr.nodeId);
    if (tr.status === "published") await unpublishTranslationVersion(tx, w, node, tr.locale);
    w.gone(node.path);
    w.added(node.path); // the localised path may now resolve to another node (a base slug)
    w.changed(node.id, "delete_translation", tr.locale);
    await tx.delete(translations).where(eq(translations.id, tr.id));
  });
}
