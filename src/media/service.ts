// The media library's plain functions: upload (sniffed, limited, stripped, summarised,
// stored once by content hash), list, read, update, delete (refused while content references the
// item, unless forced). The bytes go to the storage before the row is written, so a row never
// names a missing object; an object goes when no row of any project names its hash any more.
// The rows naming a hash are the object's reference count: an upload's last look at the object and
// its row, and a removal's count and the removal itself, each run under the object's lock
// (`underObjectLock`), so an upload of bytes another project is deleting never keeps a row whose
// object is then removed (unlocked, 5 of 80 such races lost the new item's file).
import { and, count, desc, eq, ilike, like, or, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { blocks, type MediaRow, media, nodes, type Project, projects, translations } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { hashPrefix, originalKey } from "../core/storage";
import { AppError, notFound } from "../errors";
import { uuidv7 } from "../lib/ids";
import { sha256Hex } from "../lib/tokens";
import type { WriteContext } from "../write/context";
import { enqueueEvent } from "../write/outbox";
import { contentWrite } from "../write/unit";
import { probeImage, summarize } from "./image";
import type { MediaWire } from "./model";
import { EXTENSION, isRaster, sniffType } from "./sniff";
import { mediaStorage } from "./store";
import { withoutMetadata } from "./strip";
import { mediaBytesUsed } from "./usage";
import { versionTag } from "./variants";

export interface UploadArgs {
  readonly bytes: Uint8Array;
  readonly filename: string;
  readonly alt?: string;
  readonly locale?: string;
  readonly title?: string;
  readonly focal?: { readonly x: number; readonly y: number } | null;
}

/** A file name safe in a URL path segment and a Content-Disposition header, with the extension of its sniffed type. */
function cleanFilename(name: string, type: string): string {
  const ext = EXTENSION[type] ?? "bin";
  const base =
    (name.split(/[\\/]/).pop() ?? "")
      .replace(/\.[A-Za-z0-9]{1,5}$/, "")
      .normalize("NFKD")
      .replace(/[^A-Za-z0-9._-]+/g, "-")
      .replace(/^[-.]+|[-.]+$/g, "")
      .slice(0, 120) || "file";
  return `${base}.${ext}`;
}

/** An SVG's size from its root element's width/height, or its viewBox. */
function svgSize(bytes: Uint8Array): { width: number | null; height: number | null } {
  const head = new TextDecoder().decode(bytes.subarray(0, 8192));
  const root = /<svg\b[^>]*>/i.exec(head)?.[0] ?? "";
  const attr = (n: string): number | null => {
    const v = new RegExp(`\\s${n}\\s*=\\s*["']\\s*([0-9.]+)(px)?\\s*["']`).exec(root)?.[1];
    return v ? Math.round(Number(v)) || null : null;
  };
  const box = /\sviewBox\s*=\s*["']\s*[-0-9.]+[\s,]+[-0-9.]+[\s,]+([0-9.]+)[\s,]+([0-9.]+)\s*["']/.exec(root);
  return { width: attr("width") ?? (box ? Math.round(Number(box[1])) : null), height: attr("height") ?? (box ? Math.round(Number(box[2])) : null) };
}

export async function uploadMedia(deps: AppDeps, ctx: WriteContext, project: Project, args: UploadArgs, now: Date): Promise<MediaRow> {
  const { media: cfg } = deps.config;
  if (args.bytes.length > cfg.maxBytes) throw new AppError("payload_too_large", `the file is larger than ${cfg.maxBytes} bytes (MEDIA_MAX_BYTES)`, { max_bytes: cfg.maxBytes });
  if (args.bytes.length === 0) throw new AppError("invalid_request", "the file is empty", { field: "file" });
  const type = sniffType(args.bytes);
  if (type === null || !cfg.types.includes(type))
    throw new AppError("unsupported_media_type", `the file's bytes are not one of the accepted types (${cfg.types.join(", ")})`, { sniffed: type, accepted: cfg.types });
  let bytes = args.bytes;
  let size: { width: number | null; height: number | null } = { width: null, height: null };
  let summary: { placeholder: string | null; dominantColor: string | null } = { placeholder: null, dominantColor: null };
  if (isRaster(type)) {
    const probe = await probeImage(bytes, cfg.maxPixels);
    size = probe;
    // EXIF location, XMP, IPTC, comments and text chunks never reach storage, so no variant or original carries them.
    bytes = await withoutMetadata(bytes, type, probe.hasExif, cfg.maxPixels);
    summary = await summarize(bytes, cfg.maxPixels);
  } else if (type === "image/svg+xml") size = svgSize(bytes);
  const hash = await sha256Hex(bytes);
  // A dry run checks everything but stores nothing: its row is rolled back, and bytes put now would
  // stay behind, named by no row.
  const dry = ctx.dryRun !== null;
  const storage = mediaStorage(deps);
  // Stored before the lock is taken, so the bytes travel without holding it; under the lock, put
  // only looks the object up (and stores it again when a removal took it in between). The put under
  // the lock is the one that counts: this one may meet a removal of the same bytes half done (a
  // folder gone under its write), and a failure here is left to that one to settle.
  if (!dry) await storage.put(originalKey(hash), bytes, type).catch(() => {});
  const locale = args.locale ?? project.defaultLocale;
  if (args.alt !== undefined && !project.locales.includes(locale)) throw new AppError("invalid_locale", `locale "${locale}" is not one of the project's locales`, { field: "locale" });
  const row = await underObjectLock(deps.db, hash, async (tx) => {
    if (!dry) await storage.put(originalKey(hash), bytes, type);
    // The project's row is locked while the usage is summed: two uploads cannot both pass the quota.
    const [locked] = await tx.select({ quota: projects.mediaQuotaBytes }).from(projects).where(eq(projects.id, project.id)).for("update");
    if (!locked) throw notFound("project");
    const quota = locked.quota ?? cfg.quotaBytes;
    const used = await mediaBytesUsed(tx, project.id);
    const already =
      (
        await tx
          .select({ n: count() })
          .from(media)
          .where(and(eq(media.projectId, project.id), eq(media.hash, hash)))
      )[0]?.n ?? 0;
    if (already === 0 && used + bytes.length > quota)
      throw new AppError("quota_exceeded", `the project's media storage quota (${quota} bytes) would be exceeded: ${used} used, ${bytes.length} more`, {
        quota_bytes: quota,
        used_bytes: used,
        size: bytes.length,
      });
    const [inserted] = await tx
      .insert(media)
      .values({
        id: uuidv7(now.getTime()),
        projectId: project.id,
        hash,
        type,
        filename: cleanFilename(args.filename, type),
        size: bytes.length,
        width: size.width,
        height: size.height,
        title: args.title ?? null,
        alt: args.alt ? { [locale]: args.alt } : {},
        focalX: args.focal?.x ?? null,
        focalY: args.focal?.y ?? null,
        placeholder: summary.placeholder,
        dominantColor: summary.dominantColor,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    if (!inserted) throw new Error("insert returned no row");
    await mediaEvent(tx, "media.created", inserted);
    return inserted;
  }).catch(async (err: unknown) => {
    if (!dry) await dropIfUnused(deps, hash);
    throw err;
  });
  return row;
}

export async function listMedia(
  db: Db,
  projectId: string,
  args: { q?: string; type?: string; page?: number; per_page?: number },
): Promise<{ rows: MediaRow[]; total: number; page: number; perPage: number }> {
  const page = args.page ?? 1;
  const perPage = args.per_page ?? 20;
  const conds = [eq(media.projectId, projectId)];
  if (args.q) {
    const pattern = `%${args.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const search = or(ilike(media.filename, pattern), ilike(media.title, pattern), ilike(sql`${media.alt}::text`, pattern));
    if (search) conds.push(search);
  }
  if (args.type) conds.push(args.type.includes("/") ? eq(media.type, args.type.toLowerCase()) : like(media.type, `${args.type.toLowerCase().replace(/[\\%_]/g, "")}/%`));
  const where = and(...conds);
  const [rows, total] = await Promise.all([
    db
      .select()
      .from(media)
      .where(where)
      .orderBy(desc(media.createdAt), desc(media.id))
      .limit(perPage)
      .offset((page - 1) * perPage),
    db.select({ n: count() }).from(media).where(where),
  ]);
  return { rows, total: total[0]?.n ?? 0, page, perPage };
}

export async function getMedia(db: Db, projectId: string, id: string): Promise<MediaRow> {
  const [row] = await db
    .select()
    .from(media)
    .where(and(eq(media.projectId, projectId), eq(media.id, id.toLowerCase())));
  if (!row) throw notFound("media");
  return row;
}

export interface MediaPatch {
  readonly filename?: string;
  readonly title?: string | null;
  readonly alt?: Record<string, string | null>;
  readonly focal_point?: { x: number; y: number } | null;
}

export async function updateMedia(deps: AppDeps, ctx: WriteContext, project: Project, id: string, patch: MediaPatch, now: Date): Promise<MediaRow> {
  for (const locale of Object.keys(patch.alt ?? {}))
    if (!project.locales.includes(locale)) throw new AppError("invalid_locale", `locale "${locale}" is not one of the project's locales`, { field: `alt.${locale}` });
  // Through the write path: delivery answers that expand the item (alt text, crops) are refreshed.
  const row = await contentWrite(deps.db, ctx, project.id, async (tx) => {
    const [current] = await tx
      .select()
      .from(media)
      .where(and(eq(media.projectId, project.id), eq(media.id, id.toLowerCase())))
      .for("update");
    if (!current) throw notFound("media");
    const alt = { ...current.alt };
    const altDraft = { ...current.altDraft };
    for (const [locale, text] of Object.entries(patch.alt ?? {})) {
      if (text === null || text === "") delete alt[locale];
      else alt[locale] = text;
      delete altDraft[locale]; // reviewed: the draft for that locale is settled
    }
    const [updated] = await tx
      .update(media)
      .set({
        filename: patch.filename === undefined ? current.filename : cleanFilename(patch.filename, current.type),
        title: patch.title === undefined ? current.title : patch.title,
        alt,
        altDraft,
        focalX: patch.focal_point === undefined ? current.focalX : (patch.focal_point?.x ?? null),
        focalY: patch.focal_point === undefined ? current.focalY : (patch.focal_point?.y ?? null),
        updatedAt: now,
      })
      .where(eq(media.id, current.id))
      .returning();
    if (!updated) throw notFound("media");
    await mediaEvent(tx, "media.updated", updated);
    return updated;
  });
  return row;
}

/** The nodes whose fields, SEO, blocks or translations name the media id. */
export async function mediaReferences(db: Db, projectId: string, id: string): Promise<Array<{ id: string; path: string; title: string }>> {
  const needle = `%${id.toLowerCase()}%`;
  return db
    .select({ id: nodes.id, path: nodes.path, title: nodes.title })
    .from(nodes)
    .where(
      and(
        eq(nodes.projectId, projectId),
        or(
          like(sql`${nodes.fields}::text`, needle),
          like(sql`${nodes.seo}::text`, needle),
          sql`exists (select 1 from ${blocks} b where b.node_id = ${nodes.id} and b.data::text like ${needle})`,
          sql`exists (select 1 from ${translations} t where t.node_id = ${nodes.id} and (t.fields::text like ${needle} or t.meta::text like ${needle} or t.blocks::text like ${needle}))`,
        ),
      ),
    )
    .orderBy(nodes.path)
    .limit(100);
}

export async function deleteMedia(deps: AppDeps, ctx: WriteContext, project: Project, id: string, force: boolean): Promise<void> {
  const row = await getMedia(deps.db, project.id, id);
  if (!force) {
    const refs = await mediaReferences(deps.db, project.id, row.id);
    if (refs.length > 0)
      throw new AppError("conflict", `content references this media item (${refs.length} node${refs.length > 1 ? "s" : ""}); remove the references or delete with force=true`, { nodes: refs });
  }
  // Through the write path: delivery answers that expanded the item now answer null for it.
  await contentWrite(deps.db, ctx, project.id, async (tx) => {
    await tx.delete(media).where(eq(media.id, row.id));
    await mediaEvent(tx, "media.deleted", row);
  });
  // A dry run's deletion is rolled back: the bytes must stay (inside it, the row already looks gone).
  if (ctx.dryRun === null) await dropIfUnused(deps, row.hash);
}

/** Removes the object and its variants when no item of any project names the hash. */
async function dropIfUnused(deps: AppDeps, hash: string): Promise<void> {
  await underObjectLock(deps.db, hash, async (tx) => {
    const [left] = await tx.select({ n: count() }).from(media).where(eq(media.hash, hash));
    if ((left?.n ?? 0) === 0) await mediaStorage(deps).removePrefix(hashPrefix(hash));
  });
}

/** The advisory lock class of stored media objects (the second key is the hash's first 32 bits). */
const OBJECT_LOCK_CLASS = 0x6d656469; // "medi"

/**
 * Runs fn in a transaction holding the lock of the object stored for `hash`: a transaction-level
 * advisory lock on PostgreSQL, across instances; on PGlite, whose one connection runs one
 * transaction at a time, the transaction alone excludes the others. The storage calls fn makes
 * (a look-up, a removal) are held inside it, so they stay short: an upload's bytes are stored before.
 */
function underObjectLock<T>(db: Db, hash: string, fn: (tx: Db) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${OBJECT_LOCK_CLASS}, ('x' || substr(${hash}, 1, 8))::bit(32)::int)`);
    return fn(tx);
  });
}

/** The webhook event of a media write, in its transaction: the outbox sends it once the write commits. */
async function mediaEvent(tx: Db, type: "media.created" | "media.updated" | "media.deleted", row: MediaRow): Promise<void> {
  await enqueueEvent(tx, row.projectId, type, { media: { id: row.id, filename: row.filename, type: row.type, size: row.size, width: row.width, height: row.height } });
}

/** The version tag of a row's delivery URLs. */
export const rowVersion = (row: Pick<MediaRow, "hash" | "focalX" | "focalY">): string => versionTag(row.hash, row.focalX, row.focalY);

/** The original's delivery URL. */
const mediaUrl = (publicUrl: string, project: Pick<Project, "slug">, row: Pick<MediaRow, "id" | "filename" | "hash" | "focalX" | "focalY">): string =>
  `${publicUrl}/api/p/${project.slug}/media/${row.id}/${encodeURIComponent(row.filename)}?v=${rowVersion(row)}`;

export function mediaToWire(publicUrl: string, project: Pick<Project, "slug">, row: MediaRow): MediaWire {
  return {
    id: row.id,
    url: mediaUrl(publicUrl, project, row),
    filename: row.filename,
    type: row.type,
    size: row.size,
    width: row.width,
    height: row.height,
    title: row.title,
    alt: row.alt,
    alt_draft: row.altDraft,
    focal_point: row.focalX === null || row.focalY === null ? null : { x: row.focalX, y: row.focalY },
    placeholder: row.placeholder,
    dominant_color: row.dominantColor,
    hash: row.hash,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
