// describe_media: alt text written by the project's own vision-capable AI provider, in
// the default locale, and translated into the locales asked for; stored as drafts (alt_draft) for
// review, as machine translations are: update_media with the text accepts it.
import { and, eq } from "drizzle-orm";
import { type MediaRow, media, type Project } from "../../db/schema";
import { describeImage, translateText } from "../ai/service";
import type { AppDeps } from "../core/deps";
import { originalKey } from "../core/storage";
import { AppError, notFound } from "../errors";
import { previewJpeg } from "./image";
import { getMedia } from "./service";
import { isRaster } from "./sniff";
import { mediaStorage } from "./store";

export async function describeMedia(deps: AppDeps, project: Project, id: string, opts: { locales?: readonly string[]; providerId?: string }, now: Date): Promise<MediaRow> {
  const row = await getMedia(deps.db, project.id, id);
  if (!isRaster(row.type)) throw new AppError("invalid_request", `only images can be described (this item is ${row.type})`, { field: "media_id" });
  const others = [...new Set(opts.locales ?? [])].filter((l) => l !== project.defaultLocale);
  for (const l of others) if (!project.locales.includes(l)) throw new AppError("invalid_locale", `locale "${l}" is not one of the project's locales`, { field: "locales" });
  const original = await mediaStorage(deps).get(originalKey(row.hash));
  if (!original) throw notFound("media file");
  const preview = await previewJpeg(original, deps.config.media.maxPixels);
  const image = { type: "image/jpeg", base64: Buffer.from(preview).toString("base64") };
  const { text } = await describeImage(deps, project, { image, language: project.defaultLocale, providerId: opts.providerId });
  const drafts: Record<string, string> = { [project.defaultLocale]: text.slice(0, 2000) };
  for (const to of others) {
    const t = await translateText(deps, project, { text, from: project.defaultLocale, to, field: "alt", provider_id: opts.providerId });
    drafts[to] = t.translation.trim().slice(0, 2000);
  }
  const [updated] = await deps.db
    .update(media)
    .set({ altDraft: { ...row.altDraft, ...drafts }, updatedAt: now })
    .where(and(eq(media.projectId, project.id), eq(media.id, row.id)))
    .returning();
  if (!updated) throw notFound("media");
  return updated;
}
