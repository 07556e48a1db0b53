// Media delivery: GET /api/p/{ref}/media/{id}/{filename}[?w=&h=&fit=&fm=&q=&v=]. The original as
// stored, or a variant: the query is reduced to its canonical name (variants.ts), so spellings
// that render the same bytes are answered with the same stored object and the same ETag (no
// redirect: a CDN caches each URL, this service renders and stores each variant once). A variant
// not stored yet is rendered under render.ts's limits. Answers stream from the storage by chunks
// (a slow reader holds one chunk, never the file), honour Range (206, 416) and If-None-Match (304),
// and carry a strong ETag; with the current version tag (?v=, which the URLs the API gives carry)
// they are immutable for a year. Small answers of current URLs are kept in memory while the
// project's content version stays the same (a deletion, a new focal point or any write drops them).
// SVG and PDF are served with a sandboxing CSP: a script in them never runs on our origin.
import { and, eq } from "drizzle-orm";
import { type MediaRow, media } from "../../db/schema";
import type { AppDeps } from "../core/deps";
import { originalKey, type StoredObject, variantKey } from "../core/storage";
import type { DeliveryProject } from "../delivery/cache";
import { AppError, notFound } from "../errors";
import { isUuid } from "../lib/ids";
import { createRenderer, ensureVariant, sourceOf, strictSet } from "./render";
import { rowVersion } from "./service";
import { mediaStorage } from "./store";
import { readVariant, type VariantRequest, variantSet } from "./variants";

const IMMUTABLE = "public, max-age=31536000, immutable";
const REVALIDATE = "public, max-age=60";
/** Answers kept in memory per instance, keys counted (current URLs only); larger ones stream from the storage every time. */
const HOT_MAX_BYTES = 64 * 1024 * 1024;
const HOT_ITEM_MAX_BYTES = 256 * 1024;
/** Request spellings remembered (each pointing at a kept answer); forgotten all at once past this. */
const HOT_MAX_ALIASES = 10_000;
/** What an entry costs beyond its bytes and key (headers, the Map's own). */
const ENTRY_OVERHEAD = 1024;
const SVG_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/** The project as delivery knows it, fresh for its content version; a Promise while it is (re)loaded. */
type ProjectState = (ref: string) => DeliveryProject | null | Promise<DeliveryProject | null>;

interface Meta {
  readonly headers: Record<string, string>;
  readonly etag: string;
  readonly size: number;
}

interface Hot extends Meta {
  readonly bytes: Uint8Array;
  /** The project state it was answered under: kept only while delivery's state has its content version. */
  readonly project: DeliveryProject;
}

type Body = (start: number, end: number) => BodyInit;

export function createMediaDelivery(deps: AppDeps, projectState: ProjectState) {
  const hot = new HotAnswers();
  const renderer = createRenderer(deps);
  checkVariantSet(deps);

  /** A hot read, answered before routing (delivery/front.ts): an answer in memory for its current URL; null otherwise. */
  const fastRead = (request: Request, requestId: string | ((request: Request) => string)): Response | null => {
    if (hot.empty || (request.method !== "GET" && request.method !== "HEAD") || !request.url.includes("/media/")) return null;
    const path = mediaPath(request.url);
    if (path === null) return null;
    const state = projectState(path.ref);
    if (state === null || state instanceof Promise) return null;
    const cached = hot.get(hotKey(path.ref, path.id, new URL(request.url).searchParams, request), state);
    if (cached === null) return null;
    const res = reply(request, cached, bytesBody(cached.bytes), true);
    res.headers.set("x-request-id", typeof requestId === "string" ? requestId : requestId(request));
    return res;
  };

  /** `client`: the caller's address, counted against MEDIA_RENDER_RATE when the answer needs a render. */
  const answer = async (request: Request, ref: string, id: string, client: string): Promise<Response> => {
    const state = await projectState(ref);
    if (!state) throw notFound("project");
    const query = new URL(request.url).searchParams;
    const key = hotKey(ref, id, query, request);
    const cached = hot.get(key, state);
    if (cached !== null) return reply(request, cached, bytesBody(cached.bytes));
    const row = await findMedia(deps, state.id, id);
    const current = query.get("v") === rowVersion(row);
    const { meta, variant } = describe(deps, row, query, request.headers.get("accept") ?? "", current);
    if (etagMatches(request, meta.etag)) return notModified(meta);
    const obj = await openAnswer(deps, row, variant, (v) => ensureVariant(deps, renderer, row, v.name, v.spec, client));
    const full = { ...meta, size: obj.size };
    if (obj.size > HOT_ITEM_MAX_BYTES) return reply(request, full, obj.read);
    const bytes = obj.size === 0 ? new Uint8Array(0) : new Uint8Array(await new Response(obj.read(0, obj.size - 1)).arrayBuffer());
    if (current) hot.remember(key, `${row.id}/${variant?.name ?? "original"}`, { ...full, bytes, project: state });
    return reply(request, full, bytesBody(bytes));
  };

  return { answer, fastRead };
}

/** MEDIA_VARIANT_SET entries must be variants delivery serves: a wrong one stops the start, not a request. */
function checkVariantSet({ config }: AppDeps): void {
  if (config.media.variants !== "strict") return;
  for (const entry of config.media.variantSet)
    try {
      variantSet([entry], config.media.widths, { type: "image/png", width: 4096, height: 4096, focal: null });
    } catch (err) {
      throw new Error(`MEDIA_VARIANT_SET: "${entry}": ${err instanceof Error ? err.message : String(err)}`);
    }
}

/** The stored object that answers: the original, or the variant (rendered first when it is not stored yet). */
async function openAnswer(deps: AppDeps, row: MediaRow, variant: VariantRequest | null, render: (v: VariantRequest) => Promise<void>): Promise<StoredObject> {
  const storage = mediaStorage(deps);
  const key = variant === null ? originalKey(row.hash) : variantKey(row.hash, variant.name);
  let obj = await storage.open(key);
  if (obj === null && variant !== null) {
    await render(variant);
    obj = await storage.open(key);
  }
  if (obj === null) throw notFound("media file");
  return obj;
}

/** What the answer is (its variant, if any) and its headers, before any byte is read. */
function describe(deps: AppDeps, row: MediaRow, query: URLSearchParams, accept: string, current: boolean): { meta: Omit<Meta, "size">; variant: VariantRequest | null } {
  const source = sourceOf(row);
  const variant = source === null ? null : readVariant(query, accept, deps.config.media.widths, source);
  if (variant !== null) {
    const allowed = strictSet(deps, row);
    if (allowed !== null && !allowed.has(variant.name))
      throw new AppError("invalid_request", "this variant is not one this service renders (MEDIA_VARIANTS=strict: MEDIA_VARIANT_SET only)", { field: "variant" });
  }
  const headers: Record<string, string> = {
    "content-type": variant === null ? row.type : `image/${variant.spec.format}`,
    "cache-control": current ? IMMUTABLE : REVALIDATE,
    "x-content-type-options": "nosniff",
    "access-control-allow-origin": "*",
    "accept-ranges": "bytes",
    "content-disposition": `inline; filename="${dispositionName(row.filename, variant?.spec.format ?? null)}"`,
  };
  if (variant?.negotiated) headers.vary = "Accept";
  // A script in an SVG or a PDF opened as a document runs in an opaque origin with nothing allowed (SVG: no script at all).
  if (row.type === "image/svg+xml") headers["content-security-policy"] = SVG_CSP;
  if (row.type === "application/pdf") headers["content-security-policy"] = "sandbox";
  return { meta: { headers, etag: `"${row.hash.slice(0, 32)}-${variant?.name ?? "original"}"` }, variant };
}

/**
 * Answers kept in memory: each variant once (by item and canonical name), up to HOT_MAX_BYTES with
 * keys and request spellings counted, the oldest first out; one whose project state delivery has
 * dropped (a write) goes when next asked for.
 */
class HotAnswers {
  private readonly answers = new Map<string, Hot>();
  private readonly aliases = new Map<string, string>();
  private bytes = 0;
  private aliasBytes = 0;

  get empty(): boolean {
    return this.answers.size === 0;
  }

  get(key: string, state: DeliveryProject): Hot | null {
    const canonical = this.aliases.get(key);
    const a = canonical === undefined ? undefined : this.answers.get(canonical);
    if (canonical === undefined || a === undefined) return null;
    // Every write bumps the content version: the same version, the same item (its deletion is a write).
    if (a.project.id === state.id && a.project.version === state.version) return a;
    this.drop(canonical, a);
    return null;
  }

  remember(key: string, canonical: string, a: Hot): void {
    if (this.aliases.size >= HOT_MAX_ALIASES || this.aliasBytes > HOT_MAX_BYTES / 8) {
      this.aliases.clear();
      this.aliasBytes = 0;
    }
    if (!this.aliases.has(key)) this.aliasBytes += 2 * (key.length + canonical.length) + 64;
    this.aliases.set(key, canonical);
    const old = this.answers.get(canonical);
    if (old !== undefined) this.drop(canonical, old);
    this.answers.set(canonical, a);
    this.bytes += costOf(canonical, a);
    for (const [k, oldest] of this.answers) {
      if (this.bytes + this.aliasBytes <= HOT_MAX_BYTES) break;
      this.drop(k, oldest);
    }
  }

  private drop(canonical: string, a: Hot): void {
    if (this.answers.get(canonical) !== a) return;
    this.answers.delete(canonical);
    this.bytes -= costOf(canonical, a);
  }
}

const costOf = (key: string, a: Hot): number => a.bytes.length + 2 * key.length + ENTRY_OVERHEAD;

/** The ref and id of a media URL's path (/api/p/{ref}/media/{id}/{name}); null for anything else. */
function mediaPath(url: string): { ref: string; id: string } | null {
  const m = /^[a-z]+:\/\/[^/]+\/api\/p\/([^/?#]+)\/media\/([^/?#]+)\/[^/?#]+(?:[?#]|$)/i.exec(url);
  return m?.[1] === undefined || m[2] === undefined ? null : { ref: m[1], id: m[2] };
}

/**
 * A request's key in memory: what of the URL and Accept can change the answer, nothing else (the
 * file name segment and unknown parameters are left out, so padded URLs share it). Only answers
 * to valid queries are kept, so its parts are short.
 */
function hotKey(ref: string, id: string, q: URLSearchParams, request: Request): string {
  const fm = q.get("fm") ?? "";
  const accept = fm === "" || fm === "auto" ? acceptClass(request.headers.get("accept") ?? "") : "";
  return `${ref.toLowerCase()}/${id.toLowerCase()}?${q.get("w") ?? ""}&${q.get("h") ?? ""}&${q.get("fit") ?? ""}&${fm}&${q.get("q") ?? ""}&${q.get("v") ?? ""}|${accept}`;
}

const acceptClass = (accept: string): string => (/image\/avif/i.test(accept) ? "a" : /image\/webp/i.test(accept) ? "w" : "-");

/** The media item `id` of the project; 404 when it is not there. */
async function findMedia(deps: AppDeps, projectId: string, id: string): Promise<MediaRow> {
  if (!isUuid(id)) throw notFound("media");
  const [row] = await deps.db
    .select()
    .from(media)
    .where(and(eq(media.projectId, projectId), eq(media.id, id.toLowerCase())));
  if (!row) throw notFound("media");
  return row;
}

const etagMatches = (request: Request, etag: string): boolean =>
  request.headers
    .get("if-none-match")
    ?.split(",")
    .some((t) => t.trim().replace(/^W\//, "") === etag || t.trim() === "*") ?? false;

const notModified = (m: Omit<Meta, "size">): Response =>
  new Response(null, { status: 304, headers: { etag: m.etag, "cache-control": m.headers["cache-control"] ?? REVALIDATE, ...(m.headers.vary ? { vary: m.headers.vary } : {}) } });

const bytesBody =
  (bytes: Uint8Array): Body =>
  (start, end) =>
    bytes.subarray(start, end + 1) as Uint8Array<ArrayBuffer>;

/**
 * The answer: 304, 416, a 206 of the asked range, or 200. `bare`: a HEAD is answered without a
 * body here (before routing); a routed HEAD keeps it, since Elysia answers HEAD with the GET
 * handler's answer, counting its body for Content-Length (streamed, not held) and dropping it.
 */
function reply(request: Request, m: Meta, body: Body, bare = false): Response {
  if (etagMatches(request, m.etag)) return notModified(m);
  const headers: Record<string, string> = { ...m.headers, etag: m.etag };
  const range = request.method === "GET" ? wantedRange(request, m) : null;
  if (range === "unsatisfiable")
    return new Response(null, { status: 416, headers: { "content-range": `bytes */${m.size}`, "access-control-allow-origin": "*", "cache-control": m.headers["cache-control"] ?? REVALIDATE } });
  const start = range?.start ?? 0;
  const end = range?.end ?? m.size - 1;
  if (range !== null) headers["content-range"] = `bytes ${start}-${end}/${m.size}`;
  headers["content-length"] = String(end - start + 1);
  const payload = (bare && request.method === "HEAD") || end < start ? null : body(start, end);
  return new Response(payload, { status: range === null ? 200 : 206, headers });
}

/**
 * The one byte range asked for (Range: bytes=a-b, a-, -n), unless If-Range names another version;
 * several ranges or another unit: null (the whole answer, as RFC 9110 allows).
 */
function wantedRange(request: Request, m: Meta): { start: number; end: number } | "unsatisfiable" | null {
  const header = request.headers.get("range");
  if (header === null) return null;
  const ifRange = request.headers.get("if-range");
  if (ifRange !== null && ifRange.trim() !== m.etag) return null;
  const r = /^bytes=(\d{0,15})-(\d{0,15})$/.exec(header.trim());
  if (r === null || (r[1] === "" && r[2] === "")) return null;
  if (r[1] === "") {
    const n = Number(r[2]);
    return n === 0 || m.size === 0 ? "unsatisfiable" : { start: Math.max(0, m.size - n), end: m.size - 1 };
  }
  const start = Number(r[1]);
  const end = r[2] === "" ? m.size - 1 : Number(r[2]);
  if (start >= m.size) return "unsatisfiable";
  if (end < start) return null;
  return { start, end: Math.min(end, m.size - 1) };
}

const dispositionName = (filename: string, format: string | null): string => {
  const safe = filename.replace(/[^A-Za-z0-9._-]/g, "_");
  return format === null ? safe : `${safe.replace(/\.[A-Za-z0-9]+$/, "")}.${format === "jpeg" ? "jpg" : format}`;
};

export type MediaDelivery = ReturnType<typeof createMediaDelivery>;
