import { z } from "zod";
import { IDEMPOTENT_WRITE, projectOperation, READ_ONLY, WRITE } from "../core/operation";
import { Empty } from "../lib/schemas";
import { describeMedia } from "./describe";
import { fetchUpload } from "./from-url";
import { DeleteIn, DescribeIn, FromUrlIn, ListIn, MediaId, MediaOut, UpdateIn, UploadIn } from "./model";
import { prerenderVariants } from "./render";
import { deleteMedia, getMedia, listMedia, mediaReferences, mediaToWire, updateMedia, uploadMedia } from "./service";

const route = (method: "GET" | "POST" | "PATCH" | "DELETE", tail = "") => ({ method, path: `/admin/p/:ref/media${tail}`, tag: "media" }) as const;
const item = (method: "GET" | "PATCH" | "DELETE") => ({ ...route(method, "/:id"), params: { id: "media_id" } }) as const;
const UPLOAD_ERRORS = [409, 413, 415] as const;

const uploadMediaOp = projectOperation({
  name: "upload_media",
  title: "Upload a media file",
  description:
    "Upload a file (multipart/form-data: file, alt, locale, title, focal_x, focal_y). Its type is read from its bytes (JPEG, PNG, WebP, AVIF, GIF, SVG, PDF by default); " +
    "anything else is 415. Larger than MEDIA_MAX_BYTES or than MEDIA_MAX_PIXELS pixels: 413; past the project's quota: 413 quota_exceeded. EXIF (location included) is stripped.",
  scopes: ["media:write"],
  input: UploadIn,
  output: z.object({ media: MediaOut }),
  http: { ...route("POST"), multipart: true, status: 201, data: "media", summary: "Upload a media file (multipart/form-data)", errors: [...UPLOAD_ERRORS] },
  run: async ({ deps, project, now, write }, args) => {
    const bytes = new Uint8Array(await args.file.arrayBuffer());
    const filename = "name" in args.file && typeof args.file.name === "string" ? args.file.name : "file";
    const focal = args.focal_x !== undefined && args.focal_y !== undefined ? { x: args.focal_x, y: args.focal_y } : null;
    const row = await uploadMedia(deps, write, project, { bytes, filename, alt: args.alt, locale: args.locale, title: args.title, focal }, now);
    prerenderVariants(deps, write, row);
    return { media: mediaToWire(deps.config.publicUrl, project, row) };
  },
});

const uploadFromUrlOp = projectOperation({
  name: "upload_media_from_url",
  title: "Upload a media file from a URL",
  description:
    "Fetch a file from a public https URL into the media library (no redirects followed; bounded by MEDIA_MAX_BYTES) with optional alt text, title and focal point. " +
    "Checked as an upload: type sniffed from the bytes, pixel limit, quota. Answers the media item; use its id in a field or block property of format media.",
  scopes: ["media:write"],
  input: FromUrlIn,
  output: z.object({ media: MediaOut }),
  tool: { ...WRITE, openWorldHint: true },
  http: { ...route("POST", "/from-url"), status: 201, data: "media", summary: "Upload a media file from a URL (outbound guard, no redirects)", errors: [...UPLOAD_ERRORS] },
  run: async ({ deps, project, now, write }, args) => {
    const fetched = await fetchUpload(deps, args.url);
    const row = await uploadMedia(
      deps,
      write,
      project,
      { ...fetched, filename: args.filename ?? fetched.filename, alt: args.alt, locale: args.locale, title: args.title, focal: args.focal_point ?? null },
      now,
    );
    prerenderVariants(deps, write, row);
    return { media: mediaToWire(deps.config.publicUrl, project, row) };
  },
});

const listMediaOp = projectOperation({
  name: "list_media",
  title: "List media",
  description: "List the project's media items, newest first: search by file name, title and alt text (q), filter by type (image/png or image). Paginated: page, per_page (1-100, default 20).",
  scopes: ["content:read"],
  input: ListIn,
  output: z.object({ media: z.array(MediaOut), total: z.number().int(), page: z.number().int(), per_page: z.number().int() }),
  tool: READ_ONLY,
  http: { ...route("GET"), data: "media", summary: "List media (q, type, paged)" },
  run: async ({ deps, project }, args) => {
    const { rows, total, page, perPage } = await listMedia(deps.db, project.id, args);
    return { media: rows.map((r) => mediaToWire(deps.config.publicUrl, project, r)), total, page, per_page: perPage };
  },
});

const getMediaOp = projectOperation({
  name: "get_media",
  title: "Read a media item",
  description: "Read a media item: url, type, size, width, height, alt text by locale (and machine drafts awaiting review), focal point, placeholder (ThumbHash) and dominant colour.",
  scopes: ["content:read"],
  input: z.object({ media_id: MediaId }),
  output: z.object({ media: MediaOut }),
  tool: READ_ONLY,
  http: { ...item("GET"), data: "media", summary: "Read a media item" },
  run: async ({ deps, project }, args) => ({ media: mediaToWire(deps.config.publicUrl, project, await getMedia(deps.db, project.id, args.media_id)) }),
});

const updateMediaOp = projectOperation({
  name: "update_media",
  title: "Update a media item",
  description:
    "Change a media item's alt text (by locale; null removes one; writing a locale settles its machine draft), title, file name or focal point (crops keep it in view). The bytes never change: upload again for new ones.",
  scopes: ["media:write"],
  input: UpdateIn,
  output: z.object({ media: MediaOut }),
  tool: IDEMPOTENT_WRITE,
  http: { ...item("PATCH"), data: "media", summary: "Update a media item's alt text, title, file name or focal point" },
  run: async ({ deps, project, now, write }, { media_id, ...patch }) => ({ media: mediaToWire(deps.config.publicUrl, project, await updateMedia(deps, write, project, media_id, patch, now)) }),
});

const deleteMediaOp = projectOperation({
  name: "delete_media",
  title: "Delete a media item",
  description: "Delete a media item. Refused with 409 conflict, naming the nodes, while content references it, unless force=true. Its bytes go once no item names them.",
  scopes: ["media:write"],
  input: DeleteIn,
  output: Empty,
  http: { ...item("DELETE"), query: ["force"], status: 204, summary: "Delete a media item (409 while referenced, unless ?force=true)", errors: [409] },
  run: ({ deps, project, write }, args) => deleteMedia(deps, write, project, args.media_id, args.force === true).then(() => ({})),
});

const mediaReferencesOp = projectOperation({
  name: "list_media_references",
  title: "List the nodes that reference a media item",
  description: "The nodes whose fields, SEO, blocks or translations name the media item (at most 100).",
  scopes: ["content:read"],
  input: z.object({ media_id: MediaId }),
  output: z.object({ nodes: z.array(z.object({ id: z.string(), path: z.string(), title: z.string() })) }),
  http: { ...item("GET"), path: "/admin/p/:ref/media/:id/references", data: "nodes", summary: "List the nodes that reference a media item" },
  run: async ({ deps, project }, args) => {
    const row = await getMedia(deps.db, project.id, args.media_id);
    return { nodes: await mediaReferences(deps.db, project.id, row.id) };
  },
});

const describeMediaOp = projectOperation({
  name: "describe_media",
  title: "Write alt text for an image with the project's AI provider",
  description:
    "Ask the project's AI provider (its default, or provider_id; it must accept images) for the image's alt text in the default locale, and its translations into `locales`. " +
    "The image is sent downscaled (at most 768 pixels on its longer side). The result is stored as a draft (alt_draft), not as alt: review it, then write it with update_media.",
  scopes: ["media:write"],
  input: DescribeIn,
  output: z.object({ media: MediaOut }),
  tool: { ...IDEMPOTENT_WRITE, openWorldHint: true },
  http: {
    method: "POST",
    path: "/admin/p/:ref/media/:id/describe",
    params: { id: "media_id" },
    tag: "media",
    data: "media",
    summary: "Write draft alt text with the project's AI provider",
    errors: [502, 504],
  },
  run: async ({ deps, project, now }, args) => ({
    media: mediaToWire(deps.config.publicUrl, project, await describeMedia(deps, project, args.media_id, { locales: args.locales, providerId: args.provider_id }, now)),
  }),
});

export const mediaOperations = [uploadMediaOp, uploadFromUrlOp, listMediaOp, getMediaOp, updateMediaOp, describeMediaOp, deleteMediaOp, mediaReferencesOp];
