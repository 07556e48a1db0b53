// Image work with sharp (libvips, native): the header read before anything is decoded (the pixel
// limit refuses decompression bombs), EXIF stripped, the placeholder and dominant colour, and
// variants. sharp is loaded on first use: a process that never touches an image never loads libvips.
import type { Sharp } from "sharp";
import { rgbaToThumbHash } from "thumbhash";
import { AppError } from "../errors";
import { loadSharp, type SharpFn } from "../platform/sharp";

let loaded: Promise<SharpFn> | null = null;
const sharpOf = (): Promise<SharpFn> => {
  // Loaded from node_modules, or from what the single binary embeds (src/platform/sharp.ts); a
  // runtime where it cannot load refuses images with 503 rather than failing with 500.
  loaded ??= loadSharp().catch((err: unknown) => {
    loaded = null;
    throw new AppError("service_unavailable", "image processing is not available on this installation (sharp could not be loaded)", undefined, undefined, { cause: err });
  });
  return loaded;
};

export interface Probe {
  readonly width: number | null;
  readonly height: number | null;
  readonly hasExif: boolean;
}

/** The image's size from its header, refusing one over `maxPixels` before any pixel is decoded. */
export async function probeImage(bytes: Uint8Array, maxPixels: number): Promise<Probe> {
  const sharp = await sharpOf();
  let meta: Awaited<ReturnType<Sharp["metadata"]>>;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch (err) {
    throw new AppError("unsupported_media_type", "the file could not be read as the image its bytes announce", undefined, undefined, { cause: err });
  }
  const width = meta.autoOrient?.width ?? meta.width ?? null;
  const height = meta.pageHeight ?? meta.autoOrient?.height ?? meta.height ?? null;
  if (width !== null && height !== null && width * height > maxPixels)
    throw new AppError("payload_too_large", `the image is ${width}×${height} pixels, more than the ${maxPixels} allowed (MEDIA_MAX_PIXELS)`, { width, height, max_pixels: maxPixels });
  return { width, height, hasExif: meta.exif !== undefined || meta.xmp !== undefined };
}

/**
 * The bytes to store for a raster upload with EXIF or XMP metadata: re-encoded upright without
 * them (location, camera serials), the colour profile kept. Deterministic for the same input, so
 * the same upload still lands on the same content hash.
 */
export async function stripMetadata(bytes: Uint8Array, type: string, maxPixels: number): Promise<Uint8Array> {
  const sharp = await sharpOf();
  const img = sharp(bytes, { limitInputPixels: maxPixels }).autoOrient().keepIccProfile();
  const out =
    type === "image/jpeg" ? img.jpeg({ quality: 92 }) : type === "image/png" ? img.png() : type === "image/webp" ? img.webp({ quality: 92 }) : type === "image/avif" ? img.avif({ quality: 80 }) : null;
  if (out === null) return bytes;
  return new Uint8Array(await out.toBuffer());
}

/** A ThumbHash (base64, about 25 bytes) and the dominant colour (#rrggbb). */
export async function summarize(bytes: Uint8Array, maxPixels: number): Promise<{ placeholder: string; dominantColor: string }> {
  const sharp = await sharpOf();
  const { data, info } = await sharp(bytes, { limitInputPixels: maxPixels }).autoOrient().resize(100, 100, { fit: "inside" }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const hash = rgbaToThumbHash(info.width, info.height, data);
  const { dominant } = await sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).stats();
  const hex = (n: number): string => n.toString(16).padStart(2, "0");
  return { placeholder: btoa(String.fromCharCode(...hash)), dominantColor: `#${hex(dominant.r)}${hex(dominant.g)}${hex(dominant.b)}` };
}

export type Fit = "cover" | "contain" | "inside";
export type OutputFormat = "webp" | "avif" | "jpeg" | "png";

export interface VariantSpec {
  readonly width: number | null;
  readonly height: number | null;
  readonly fit: Fit;
  readonly format: OutputFormat;
  readonly quality: number;
  /** Focal point, 0..1 from the left and the top; the centre when absent. */
  readonly focal: { readonly x: number; readonly y: number };
}

const FORMAT_TYPE: Record<OutputFormat, string> = { webp: "image/webp", avif: "image/avif", jpeg: "image/jpeg", png: "image/png" };

/** Renders a variant: scaled, cropped around the focal point for `cover`, re-encoded without metadata. */
export async function renderVariant(bytes: Uint8Array, spec: VariantSpec, maxPixels: number): Promise<{ bytes: Uint8Array; type: string }> {
  const sharp = await sharpOf();
  let img = sharp(bytes, { limitInputPixels: maxPixels }).autoOrient();
  const meta = await sharp(bytes, { limitInputPixels: maxPixels }).metadata();
  const W = meta.autoOrient?.width ?? meta.width ?? 1;
  const H = meta.autoOrient?.height ?? meta.height ?? 1;
  const { width: w, height: h } = spec;
  if (spec.fit === "cover" && w !== null && h !== null) {
    // Scale to cover w×h, then cut the w×h window centred on the focal point (kept inside the image).
    const scale = Math.max(w / W, h / H);
    const rw = Math.max(w, Math.round(W * scale));
    const rh = Math.max(h, Math.round(H * scale));
    const left = Math.min(rw - w, Math.max(0, Math.round(spec.focal.x * rw - w / 2)));
    const top = Math.min(rh - h, Math.max(0, Math.round(spec.focal.y * rh - h / 2)));
    img = img.resize(rw, rh, { fit: "fill" }).extract({ left, top, width: w, height: h });
  } else if (w !== null || h !== null) {
    img = img.resize(w, h, { fit: spec.fit === "contain" ? "contain" : "inside", withoutEnlargement: true, background: { r: 0, g: 0, b: 0, alpha: 0 } });
  }
  const q = spec.quality;
  const out =
    spec.format === "webp"
      ? img.webp({ quality: q })
      : spec.format === "avif"
        ? img.avif({ quality: Math.max(1, q - 15) })
        : spec.format === "png"
          ? img.png()
          : img.flatten({ background: "#ffffff" }).jpeg({ quality: q, mozjpeg: true });
  return { bytes: new Uint8Array(await out.toBuffer()), type: FORMAT_TYPE[spec.format] };
}

/** A small JPEG of the image (at most `edge` pixels on its longer side): what an AI vendor is sent, so a call's cost is bounded. */
export async function previewJpeg(bytes: Uint8Array, maxPixels: number, edge = 768): Promise<Uint8Array> {
  const sharp = await sharpOf();
  const out = await sharp(bytes, { limitInputPixels: maxPixels })
    .autoOrient()
    .resize(edge, edge, { fit: "inside", withoutEnlargement: true })
    .flatten({ background: "#ffffff" })
    .jpeg({ quality: 70 })
    .toBuffer();
  return new Uint8Array(out);
}
