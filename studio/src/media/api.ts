// The media library's calls: list (paged), read, update, describe, references, delete, and the
// upload, which goes through XMLHttpRequest because fetch reports no upload progress.
import type { z } from "zod";
import type { MediaOut } from "../../../src/media/model";
import { ApiError, data, enc, projectBase, request } from "../app/api";
import type { Me } from "../app/types";

export type MediaItem = z.output<typeof MediaOut>;
export interface MediaReference {
  id: string;
  path: string;
  title: string;
}
export interface MediaPage {
  items: MediaItem[];
  total: number;
  page: number;
}

/** Items a page of the grid asks for at once (the service's most). */
export const PER_PAGE = 100;

export const mediaKeys = {
  all: (ref: string) => ["media", ref] as const,
  page: (ref: string, q: string, type: string, page: number) => ["media", ref, "list", q, type, page] as const,
  item: (ref: string, id: string) => ["media", ref, "item", id] as const,
  references: (ref: string, id: string) => ["media", ref, "references", id] as const,
};

const mediaUrl = (ref: string, id: string) => `${projectBase(ref)}/media/${enc(id)}`;

export async function listMedia(ref: string, q: string, type: string, page: number, signal?: AbortSignal): Promise<MediaPage> {
  const params = new URLSearchParams({ page: String(page), per_page: String(PER_PAGE) });
  if (q) params.set("q", q);
  if (type) params.set("type", type);
  const res = await request<{ data: MediaItem[]; total: number; page: number }>(`${projectBase(ref)}/media?${params}`, { signal });
  return { items: res.body.data, total: res.body.total, page: res.body.page };
}

export const readMedia = (ref: string, id: string) => data<MediaItem>(mediaUrl(ref, id));
export const updateMedia = (ref: string, id: string, patch: { alt?: Record<string, string | null>; focal_point?: { x: number; y: number } | null }) =>
  data<MediaItem>(mediaUrl(ref, id), { method: "PATCH", body: patch });
export const describeMedia = (ref: string, id: string, locales: string[]) => data<MediaItem>(`${mediaUrl(ref, id)}/describe`, { method: "POST", body: { locales } });
export const mediaReferences = (ref: string, id: string) => data<MediaReference[]>(`${mediaUrl(ref, id)}/references`);
export const deleteMedia = (ref: string, id: string, force: boolean) => request<null>(`${mediaUrl(ref, id)}${force ? "?force=true" : ""}`, { method: "DELETE" });

/** Whether the person may upload, edit and delete media (the server refuses it anyway). */
export const canWriteMedia = (me: Me | undefined) => !!me && (me.scopes.length > 0 ? me.scopes.includes("media:write") : me.role !== "viewer");

/** Raster images have variants (resized, re-encoded); SVG and PDF are served as they are. */
export const isRaster = (type: string) => type.startsWith("image/") && type !== "image/svg+xml";

/**
 * The item's file on this origin (the studio's CSP allows images from 'self' only): the path and
 * query of its delivery URL, with a width and WebP for rasters when `width` is given (one of the
 * service's MEDIA_WIDTHS).
 */
export function fileUrl(item: Pick<MediaItem, "url" | "type">, width?: number): string {
  const u = new URL(item.url, window.location.origin);
  if (width !== undefined && isRaster(item.type)) {
    u.searchParams.set("w", String(width));
    u.searchParams.set("fm", "webp");
  }
  return u.pathname + u.search;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** The alt text to show beside an item: the locale's, else the default locale's, else any. */
export function altIn(item: Pick<MediaItem, "alt">, locale: string | undefined, fallback: string | undefined): string {
  return (locale && item.alt[locale]) || (fallback && item.alt[fallback]) || Object.values(item.alt)[0] || "";
}

/** One upload: multipart POST with the studio's header and the session cookie, reporting progress. */
export function uploadFile(ref: string, file: File, onProgress: (loaded: number, total: number) => void): { done: Promise<MediaItem>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<MediaItem>((resolve, reject) => {
    xhr.open("POST", `${projectBase(ref)}/media`);
    xhr.withCredentials = true;
    xhr.setRequestHeader("X-CMS-Studio", "1");
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => {
      let body: { data?: MediaItem; error?: { code?: string; message?: string; details?: Record<string, unknown> } } | null = null;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : null;
      } catch {
        body = null;
      }
      if (xhr.status >= 200 && xhr.status < 300 && body?.data) return resolve(body.data);
      const retry = Number(xhr.getResponseHeader("Retry-After"));
      reject(
        new ApiError(
          xhr.status,
          body?.error?.code ?? `http_${xhr.status}`,
          body?.error?.message ?? `The service answered ${xhr.status}`,
          body?.error?.details,
          Number.isFinite(retry) && retry > 0 ? retry : null,
        ),
      );
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload was cut off: the service cannot be reached or closed the connection.", undefined));
    xhr.onabort = () => reject(new ApiError(0, "aborted", "Upload cancelled.", undefined));
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}

/** A person's sentence for a refused upload. */
export function uploadErrorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 415) return `Unsupported file type: only JPEG, PNG, WebP, AVIF, GIF, SVG and PDF files can be uploaded. (${err.message})`;
    if (err.status === 413 && err.code === "quota_exceeded") return `The project's storage quota is used up. (${err.message})`;
    if (err.status === 413) return `The file is too large. (${err.message})`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
