// Rendering variants without letting anyone hold the instance: renders run under the app's work
// queue (MEDIA_RENDER_CONCURRENCY at once, MEDIA_RENDER_QUEUE waiting, one project at most half of
// them: 503 past it), each client address may start MEDIA_RENDER_RATE a minute (429 past it), a
// project past its quota gets none (413; variants count in its storage), and with
// MEDIA_VARIANTS=strict only the configured set is rendered, after the upload.
import type { MediaRow } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { originalKey, variantKey } from "../core/storage";
import { AppError, notFound } from "../errors";
import { MemoryLimiter } from "../lib/memory-limiter";
import { WorkQueue } from "../lib/work-queue";
import type { WriteContext } from "../write/context";
import { renderVariant, type VariantSpec } from "./image";
import { isRaster } from "./sniff";
import { mediaStorage } from "./store";
import { chargeVariant, mediaBytesUsed, mediaQuota } from "./usage";
import { variantSet } from "./variants";

export interface Renderer {
  readonly queue: WorkQueue;
  /** Renders started per client address and minute; null for the service's own (pre-renders). */
  readonly limiter: MemoryLimiter | null;
}

const RETRY_BUSY_SECONDS = 5;

/** The app's renderer: its work queue (shared with the pre-renders of uploads) and its per-client counts. */
export function createRenderer(deps: AppDeps): Renderer {
  return { queue: renderQueue(deps), limiter: new MemoryLimiter(deps.config.media.renderRate, 60_000) };
}

const renderQueue = (deps: AppDeps): WorkQueue => deps.renderQueue ?? new WorkQueue(deps.config.media.renderConcurrency, deps.config.media.renderQueue);

/** The row as variants.ts reads it: type, upright size, focal point; null when its size is unknown. */
export function sourceOf(row: MediaRow): { type: string; width: number; height: number; focal: { x: number; y: number } | null } | null {
  if (row.width === null || row.height === null || !isRaster(row.type)) return null;
  return { type: row.type, width: row.width, height: row.height, focal: row.focalX === null || row.focalY === null ? null : { x: row.focalX, y: row.focalY } };
}

/** The variants MEDIA_VARIANTS=strict serves for the item (empty when on demand). */
export function strictSet(deps: AppDeps, row: MediaRow): Map<string, VariantSpec> | null {
  const { media } = deps.config;
  if (media.variants !== "strict") return null;
  const source = sourceOf(row);
  return source === null ? new Map() : variantSet(media.variantSet, media.widths, source);
}

/**
 * Makes sure the variant is in the storage, rendering it when it is not: joined when it is already
 * rendering, else counted against `client` (null: not a visitor's request), the project's quota
 * and the queue.
 */
export async function ensureVariant(deps: AppDeps, r: Renderer, row: MediaRow, name: string, spec: VariantSpec, client: string | null): Promise<void> {
  const key = variantKey(row.hash, name);
  if (!r.queue.has(key)) {
    if (r.limiter !== null && client !== null) {
      const now = deps.now().getTime();
      const wait = r.limiter.blockedFor(client, now);
      if (wait > 0) throw new AppError("rate_limited", "too many image variants rendered for this client; try again later", { retry_after: wait }, { "retry-after": String(wait) });
      r.limiter.hit(client, now);
    }
    await checkQuota(deps, row);
  }
  const run = r.queue.run(row.projectId, key, () => renderAndStore(deps, row, name, spec));
  if (run === null)
    throw new AppError("service_unavailable", "too many image variants are being rendered; try again shortly", { retry_after: RETRY_BUSY_SECONDS }, { "retry-after": String(RETRY_BUSY_SECONDS) });
  await run;
}

/** A project past its quota renders nothing more (its variants count in it). */
async function checkQuota(deps: AppDeps, row: MediaRow): Promise<void> {
  const quota = await mediaQuota(deps.db, row.projectId, deps.config.media.quotaBytes);
  if (quota === null) throw notFound("project");
  const used = await mediaBytesUsed(deps.db, row.projectId);
  if (used >= quota)
    throw new AppError("quota_exceeded", `the project's media storage quota (${quota} bytes) is used up: no more image variants are rendered`, { quota_bytes: quota, used_bytes: used });
}

async function renderAndStore(deps: AppDeps, row: MediaRow, name: string, spec: VariantSpec): Promise<void> {
  const storage = mediaStorage(deps);
  const key = variantKey(row.hash, name);
  if (await storage.has(key)) return; // rendered meanwhile (by another instance)
  const original = await storage.get(originalKey(row.hash));
  if (!original) throw notFound("media file");
  let bytes: Uint8Array;
  try {
    bytes = (await renderVariant(original, spec, deps.config.media.maxPixels)).bytes;
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError("service_unavailable", "the image variant could not be rendered", undefined, { "retry-after": "60" }, { cause: err });
  }
  await storage.put(key, bytes, "application/octet-stream");
  // An item deleted while its variant rendered: the bytes it left behind go now (they would be named by no row).
  if (!(await chargeVariant(deps.db, row, name, bytes.length, deps.now()))) await storage.removePrefix(key);
}

/**
 * MEDIA_VARIANTS=strict: the configured variants of a new item, rendered in the background through
 * the same queue (a full queue or a quota reached leaves the rest to the first request for each).
 */
export function prerenderVariants(deps: AppDeps, write: WriteContext, row: MediaRow): void {
  const set = strictSet(deps, row);
  if (set === null || set.size === 0 || write.dryRun !== null) return;
  const r: Renderer = { queue: renderQueue(deps), limiter: null };
  for (const [name, spec] of set)
    ensureVariant(deps, r, row, name, spec, null).catch((err: unknown) => {
      if (!(err instanceof AppError && (err.code === "service_unavailable" || err.code === "quota_exceeded")))
        deps.log.warn("media: a pre-render failed", { media_id: row.id, variant: name, err: err instanceof Error ? err.name : String(err) });
    });
}
