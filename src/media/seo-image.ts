// A node's SEO image as a media item: `og_image` (a node's `seo`, a translation's
// `meta`) holds either an image URL or the id of one of the project's media items.
// Delivery then gives og:image the item's URL with its width, height, type and alt text
// (delivery/render.ts) and the sitemap lists it as the page's image (delivery/sitemap.ts).
import { and, eq } from "drizzle-orm";
import type { Db } from "../../db/client";
import { media } from "../../db/schema";
import { AppError } from "../errors";
import { isUuid } from "../lib/ids";

/** The media id a SEO `og_image` value names, or null when it is a URL (or absent). */
export const seoMediaId = (value: unknown): string | null => (typeof value === "string" && isUuid(value.trim()) ? value.trim().toLowerCase() : null);

/**
 * 400 invalid_request when `seo.og_image` names a media id that is not one of the project's items
 * (never existed, deleted, another project's): the same answer for each, so no other project's ids leak.
 */
export async function checkSeoImage(db: Db, projectId: string, seo: Readonly<Record<string, unknown>> | null | undefined, field: string): Promise<void> {
  const id = seoMediaId(seo?.og_image);
  if (id === null) return;
  const [found] = await db
    .select({ id: media.id })
    .from(media)
    .where(and(eq(media.projectId, projectId), eq(media.id, id)));
  if (!found) throw new AppError("invalid_request", `${field} names media ${id}, which is not a media item of this project`, { field, media_id: id });
}
