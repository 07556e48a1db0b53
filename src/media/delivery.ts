// Media delivery: GET /api/p/{ref}/media/{id}/{filename}[?w=&h=&fit=&fm=&q=&v=]. The
// original as stored, or a variant rendered once, stored beside the original and single-flight
// (concurrent requests for one variant wait for one render). Answers carry a strong ETag and honour
// If-None-Match; with the current version tag (?v=, which the URLs the API gives carry) they are
// immutable for a year. SVG is served with a sandboxing CSP: a script in it never runs on our origin.
import { and, eq } from "drizzle-orm";
import { type MediaRow, media } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { originalKey, variantKey } from "../core/storage";
import { notFound } from "../errors";
import { isUuid } from "../lib/ids";
import { findProject } from "../projects/service";
import { renderVariant } from "./image";
import { rowVersion } from "./service";
import { isRaster } from "./sniff";
import { mediaStorage } from "./store";
import { readVariant } from "./variants";

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=60";
/** Rendered answers kept in memory per instance (immutable URLs only), and for how long before a look at the row again. */
const HOT_MAX_BYTES = 64 * 1024 * 1024;
const HOT_TTL_MS = 60_000;

interface Answer {
  readonly bytes: Uint8Array;
  readonly headers: Record<string, string>;
  readonly etag: string;
  readonly at: number;
}

export function createMediaDelivery(deps: AppDeps) {
  const inflight = new Map<string, Promise<Uint8Array>>();
  const hot = new HotAnswers(deps.now);

  /**
   * A hot read, answered before routing (delivery/front.ts, with the delivery pages' hot reads): a
   * variant or original in memory for its immutable URL; null otherwise.
   */
  const fastRead = (request: Request, requestId: string | ((request: Request) => string)): Response | null => {
    if (hot.size === 0 || (request.method !== "GET" && request.method !== "HEAD") || !request.url.includes("/media/")) return null;
    const cached = hot.fresh(hotKeyOf(request));
    if (cached === null) return null;
    const res = reply(request, cached);
    res.headers.set("x-request-id", typeof requestId === "string" ? requestId : requestId(request));
    return res;
  };

  const answer = async (request: Request, ref: string, id: string): Promise<Response> => {
    const hotKey = hotKeyOf(request);
    const cached = hot.fresh(hotKey);
    if (cached !== null) return reply(request, cached);
    const row = await findMedia(deps, ref, id);
    const url = new URL(request.url);
    const current = url.searchParams.get("v") === rowVersion(row);
    const a = await renderAnswer(deps, inflight, row, url.searchParams, request.headers.get("accept") ?? "", current);
    if (current) hot.remember(hotKey, a);
    return reply(request, a);
  };

  return { answer, fastRead };
}

/** Rendered answers of immutable URLs, up to HOT_MAX_BYTES (the oldest go first), each trusted for HOT_TTL_MS. */
class HotAnswers {
  private readonly answers = new Map<string, Answer>();
  private bytes = 0;

  constructor(private readonly now: () => Date) {}

  get size(): number {
    return this.answers.size;
  }

  /** The answer kept for `key`, unless it is older than HOT_TTL_MS; else null. */
  fresh(key: string): Answer | null {
    const a = this.answers.get(key);
    return a !== undefined && this.now().getTime() - a.at < HOT_TTL_MS ? a : null;
  }

  remember(key: string, a: Answer): void {
    if (a.bytes.length > HOT_MAX_BYTES / 8) return;
    this.answers.set(key, a);
    this.bytes += a.bytes.length;
    for (const [k, old] of this.answers) {
      if (this.bytes <= HOT_MAX_BYTES) break;
      this.answers.delete(k);
      this.bytes -= old.bytes.length;
    }
  }
}

/** The key of an answer in memory: the URL and what of Accept fm=auto reads. */
function hotKeyOf(request: Request): string {
  const accept = request.headers.get("accept") ?? "";
  return `${request.url}|${/image\/avif/i.test(accept) ? "a" : /image\/webp/i.test(accept) ? "w" : "-"}`;
}

/** The media item `id` of project `ref`; 404 when either is not there. */
async function findMedia(deps: AppDeps, ref: string, id: string): Promise<MediaRow> {
  if (!isUuid(id)) throw notFound("media");
  const project = await findProject(deps.db, ref);
  if (!project) throw notFound("project");
  const [row] = await deps.db
    .select()
    .from(media)
    .where(and(eq(media.projectId, project.id), eq(media.id, id.toLowerCase())));
  if (!row) throw notFound("media");
  return row;
}

/** The answer for an item: its original, or the variant the query (and Accept, for fm=auto) asks for. */
async function renderAnswer(deps: AppDeps, inflight: Map<string, Promise<Uint8Array>>, row: MediaRow, query: URLSearchParams, accept: string, current: boolean): Promise<Answer> {
  const focal = row.focalX === null || row.focalY === null ? null : { x: row.focalX, y: row.focalY };
  const variant = isRaster(row.type) ? readVariant(query, accept, deps.config.media.widths, row.type, focal) : null;
  const storage = mediaStorage(deps);
  let bytes: Uint8Array | null;
  let type = row.type;
  let name = "original";
  if (variant === null) bytes = await storage.get(originalKey(row.hash));
  else {
    name = variant.name;
    type = `image/${variant.spec.format}`;
    bytes = await variantBytes(deps, inflight, row, variant.name, async () => {
      const original = await storage.get(originalKey(row.hash));
      if (!original) throw notFound("media file");
      return (await renderVariant(original, variant.spec, deps.config.media.maxPixels)).bytes;
    });
  }
  if (!bytes) throw notFound("media file");
  const headers: Record<string, string> = {
    "content-type": type,
    "cache-control": current ? IMMUTABLE : REVALIDATE,
    "x-content-type-options": "nosniff",
    "access-control-allow-origin": "*",
    "content-disposition": `inline; filename="${dispositionName(row.filename, name === "original" ? null : (variant?.spec.format ?? null))}"`,
  };
  if (variant?.negotiated) headers.vary = "Accept";
  // A script in an SVG opened as a document runs in an opaque origin with nothing allowed (no script at all).
  if (row.type === "image/svg+xml") headers["content-security-policy"] = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:";
  return { bytes, headers, etag: `"${row.hash.slice(0, 32)}-${name}"`, at: deps.now().getTime() };
}

/** The variant's bytes: from storage, or rendered once (one render per variant at a time in this instance). */
async function variantBytes(deps: AppDeps, inflight: Map<string, Promise<Uint8Array>>, row: MediaRow, name: string, render: () => Promise<Uint8Array>): Promise<Uint8Array> {
  const storage = mediaStorage(deps);
  const key = variantKey(row.hash, name);
  const stored = await storage.get(key);
  if (stored) return stored;
  let pending = inflight.get(key);
  if (!pending) {
    pending = (async () => {
      const bytes = await render();
      await storage.put(key, bytes, "application/octet-stream");
      return bytes;
    })().finally(() => inflight.delete(key));
    inflight.set(key, pending);
  }
  return pending;
}

function reply(request: Request, a: Answer): Response {
  const match = request.headers.get("if-none-match");
  if (match?.split(",").some((t) => t.trim().replace(/^W\//, "") === a.etag || t.trim() === "*"))
    return new Response(null, { status: 304, headers: { etag: a.etag, "cache-control": a.headers["cache-control"] ?? REVALIDATE, ...(a.headers.vary ? { vary: a.headers.vary } : {}) } });
  const body = request.method === "HEAD" ? null : (a.bytes as Uint8Array<ArrayBuffer>);
  return new Response(body, { status: 200, headers: { ...a.headers, etag: a.etag, "content-length": String(a.bytes.length) } });
}

const dispositionName = (filename: string, format: string | null): string => {
  const safe = filename.replace(/[^A-Za-z0-9._-]/g, "_");
  return format === null ? safe : `${safe.replace(/\.[A-Za-z0-9]+$/, "")}.${format === "jpeg" ? "jpg" : format}`;
};

export type MediaDelivery = ReturnType<typeof createMediaDelivery>;
