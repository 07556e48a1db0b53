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

export type OutputFormat = "webp" | "avif" | "jpeg" | "png";

/** A variant as exact operations on the upright original (variants.ts computes them from the query and the item's size). */
export interface VariantSpec {
  /** Scaled to exactly this size; null: the original's size. */
  readonly resize: { readonly width: number; readonly height: number } | null;
  /** Then this window cut out (cover's crop around the focal point). */
  readonly extract: { readonly left: number; readonly top: number; readonly width: number; readonly height: number } | null;
  /** Then this much transparent (JPEG: white) border added (contain's box). */
  readonly pad: { readonly top: number; readonly right: number; readonly bottom: number; readonly left: number } | null;
  readonly format: OutputFormat;
  /** null for PNG, which is lossless. */
  readonly quality: number | null;
}

const FORMAT_TYPE: Record<OutputFormat, string> = { webp: "image/webp", avif: "image/avif", jpeg: "image/jpeg", png: "image/png" };
/**
 * AVIF's encoder effort (sharp's default is 4): at 4 a 1280 × 1280 photo-like image cost 15.1 s of
 * CPU here, at 2 1.1 s, for a file 4 % smaller (noise) to a few % larger (photos).
 */
const AVIF_EFFORT = 2;
/** libvips stops a render after this long (a render holds a slot of the queue in src/media/render.ts). */
const RENDER_TIMEOUT_SECONDS = 120;

/** Renders a variant: scaled, cropped or padded as the spec says, re-encoded without metadata. */
export async function renderVariant(bytes: Uint8Array, spec: VariantSpec, maxPixels: number): Promise<{ bytes: Uint8Array; type: string }> {
  const sharp = await sharpOf();
  let img = sharp(bytes, { limitInputPixels: maxPixels }).autoOrient().timeout({ seconds: RENDER_TIMEOUT_SECONDS });
  if (spec.resize) img = img.resize(spec.resize.width, spec.resize.height, { fit: "fill" });
  if (spec.extract) img = img.extract(spec.extract);
  if (spec.pad) img = img.extend({ ...spec.pad, background: { r: 0, g: 0, b: 0, alpha: 0 } });
  const q = spec.quality ?? 75;
  const out =
    spec.format === "webp"
      ? img.webp({ quality: q })
      : spec.format === "avif"
        ? img.avif({ quality: Math.max(1, q - 15), effort: AVIF_EFFORT })
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
