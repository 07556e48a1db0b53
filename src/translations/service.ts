import { asc, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Db } from "../../db/client";
import { blocks, type Project, translations } from "../../db/schema";
import { findTranslation, getNode, projectLocale } from "../content/service";
import { AppError, notFound } from "../errors";
import { uuidv7 } from "../lib/ids";
import { oneRow } from "../lib/rows";
import { checkSeoImage } from "../media/seo-image";
import type { WriteContext } from "../write/context";
import { contentWrite } from "../write/unit";
import type { TranslationOut } from "./model";

export type Translation = typeof translations.$inferSelect;

export const translationToWire = (tr: Translation): z.output<typeof TranslationOut> => ({
  id: tr.id,
  node_id: tr.nodeId,
  locale: tr.locale,
  meta: tr.meta,
  fields: tr.fields,
  blocks: tr.blocks,
  status: tr.status,
  publish_at: tr.publishAt?.toISOString() ?? null,
  unpublish_at: tr.unpublishAt?.toISOString() ?? null,
  created_at: tr.createdAt.toISOString(),
  updated_at: tr.updatedAt.toISOString(),
});

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
    const ids = new Set(overrides.length > 0 ? (await tx.select({ id: blocks.id }).from(blocks).where(eq(blocks.nodeId, node.id))).map((b) => b.id) : []);
    const [unknown] = overrides.find(([id]) => !ids.has(id.toLowerCase())) ?? [];
    if (unknown !== undefined) throw new AppError("invalid_request", `block ${unknown} is not a block of this node`, { field: `blocks.${unknown}` });
    const values = {
      meta: input.meta ?? {},
      fields: input.fields ?? {},
      blocks: Object.fromEntries(overrides.map(([id, data]) => [id.toLowerCase(), data])),
      status: input.status ?? "published",
      updatedAt: now,
    } as const;
    return oneRow(
      await tx
        .insert(translations)
        .values({ id: uuidv7(now.getTime()), projectId: project.id, nodeId: node.id, locale: loc, createdAt: now, ...values })
        .onConflictDoUpdate({ target: [translations.nodeId, translations.locale], set: values })
        .returning(),
    );
  });
}

export async function deleteTranslation(db: Db, ctx: WriteContext, project: Project, nodeId: string, locale: string): Promise<void> {
  const tr = await getTranslation(db, project, nodeId, locale);
  await contentWrite(db, ctx, project.id, async (tx, w) => {
    const node = await getNode(tx, project.id, tr.nodeId);
    w.gone(node.path);
    w.added(node.path); // the localised path may now resolve to another node (a base slug)
    w.changed(node.id, "delete_translation", tr.locale);
    await tx.delete(translations).where(eq(translations.id, tr.id));
  });
}
