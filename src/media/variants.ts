// Which variant a delivery request asks for, reduced to what changes the output: the query
// (widths and heights from MEDIA_WIDTHS only, three fits, four formats, three qualities) becomes
// the exact geometry of the image rendered, for the item's own size. Spellings that make the same
// bytes share one name, so they are rendered and stored once: `q` means nothing to PNG, `fit`
// nothing without both sizes, and nothing is enlarged past the original (a box larger than the
// image keeps its shape at the image's resolution). The name is the storage key and the ETag.
import { AppError } from "../errors";
import type { OutputFormat, VariantSpec } from "./image";

type Fit = "cover" | "contain" | "inside";
const FITS: readonly Fit[] = ["cover", "contain", "inside"];
const FORMATS = ["webp", "avif", "jpeg", "png", "auto"] as const;
/** The qualities rendered; the values accepted before (40 … 100) are read as the nearest of them. */
const QUALITIES = [50, 75, 90] as const;
const QUALITY_OF: Record<string, number> = { "40": 50, "50": 50, "60": 75, "70": 75, "75": 75, "80": 75, "90": 90, "100": 90 };

export interface VariantRequest {
  readonly spec: VariantSpec;
  /** The canonical name, e.g. `r640x427-q75.webp`: the same for every query that renders the same bytes. */
  readonly name: string;
  /** The format came from Accept: the answer varies by it. */
  readonly negotiated: boolean;
}

interface Source {
  readonly type: string;
  readonly width: number;
  readonly height: number;
  readonly focal: { readonly x: number; readonly y: number } | null;
}

const bad = (field: string, message: string): AppError => new AppError("invalid_request", message, { field });

/** null: the original is asked for (no w, h or fm). */
export function readVariant(query: URLSearchParams, accept: string, widths: readonly number[], source: Source): VariantRequest | null {
  const dim = (name: "w" | "h"): number | null => {
    const raw = query.get(name);
    if (raw === null || raw === "") return null;
    const n = /^\d{1,5}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!widths.includes(n)) throw bad(name, `${name} must be one of ${widths.join(", ")} (MEDIA_WIDTHS)`);
    return n;
  };
  const w = dim("w");
  const h = dim("h");
  const fm = query.get("fm");
  if (w === null && h === null && (fm === null || fm === "")) return null;
  const fitRaw = query.get("fit");
  if (fitRaw !== null && fitRaw !== "" && !FITS.includes(fitRaw as Fit)) throw bad("fit", `fit must be one of ${FITS.join(", ")}`);
  if (fm !== null && fm !== "" && !(FORMATS as readonly string[]).includes(fm)) throw bad("fm", `fm must be one of ${FORMATS.join(", ")}`);
  const qRaw = query.get("q");
  const q = qRaw === null || qRaw === "" ? 75 : QUALITY_OF[qRaw];
  if (q === undefined) throw bad("q", `q must be one of ${QUALITIES.join(", ")} (40 … 100 are read as the nearest)`);
  const negotiated = fm === null || fm === "" || fm === "auto";
  const format: OutputFormat = negotiated ? pickFormat(accept, source.type) : (fm as OutputFormat);
  const fit: Fit = w !== null && h !== null ? ((fitRaw || "cover") as Fit) : "inside";
  const geo = geometry(source, w, h, fit);
  const quality = format === "png" ? null : q;
  return { spec: { ...geo, format, quality }, name: `${geometryName(geo)}${quality === null ? "" : `-q${quality}`}.${format}`, negotiated };
}

type Geometry = Pick<VariantSpec, "resize" | "extract" | "pad">;

/** The exact operations for a w × h box (either may be absent) over a W × H image, never enlarging it. */
function geometry(src: Source, w: number | null, h: number | null, fit: Fit): Geometry {
  const { width: W, height: H } = src;
  const size = (s: number) => ({ width: Math.max(1, Math.round(W * s)), height: Math.max(1, Math.round(H * s)) });
  const resized = (s: number) => (s >= 1 ? null : size(s));
  if (w === null || h === null || fit === "inside") {
    const s = Math.min(w === null ? 1 : w / W, h === null ? 1 : h / H, 1);
    return { resize: resized(s), extract: null, pad: null };
  }
  if (fit === "contain") {
    // The image scaled to fit the box, padded to the box; a box larger than the image keeps its shape, shrunk to the image's scale.
    const fitScale = Math.min(w / W, h / H);
    const s = Math.min(fitScale, 1);
    const img = size(s);
    const bw = fitScale > 1 ? Math.max(img.width, Math.round(w / fitScale)) : w;
    const bh = fitScale > 1 ? Math.max(img.height, Math.round(h / fitScale)) : h;
    const dx = bw - img.width;
    const dy = bh - img.height;
    const pad = dx === 0 && dy === 0 ? null : { left: Math.floor(dx / 2), right: dx - Math.floor(dx / 2), top: Math.floor(dy / 2), bottom: dy - Math.floor(dy / 2) };
    return { resize: resized(s), extract: null, pad };
  }
  // cover: scaled to cover the box, then the box's window centred on the focal point (kept inside the image).
  const coverScale = Math.max(w / W, h / H);
  const s = Math.min(coverScale, 1);
  const img = size(s);
  const cw = Math.min(img.width, coverScale > 1 ? Math.max(1, Math.round(w / coverScale)) : w);
  const ch = Math.min(img.height, coverScale > 1 ? Math.max(1, Math.round(h / coverScale)) : h);
  const f = src.focal ?? { x: 0.5, y: 0.5 };
  const left = Math.min(img.width - cw, Math.max(0, Math.round(f.x * img.width - cw / 2)));
  const top = Math.min(img.height - ch, Math.max(0, Math.round(f.y * img.height - ch / 2)));
  const extract = cw === img.width && ch === img.height ? null : { left, top, width: cw, height: ch };
  return { resize: resized(s), extract, pad: null };
}

/** `o` (the original's size) or `r<w>x<h>`, then `-e<left>.<top>.<w>x<h>` for a crop and `-p<top>.<right>.<bottom>.<left>` for padding. */
function geometryName(g: Geometry): string {
  const base = g.resize === null ? "o" : `r${g.resize.width}x${g.resize.height}`;
  const e = g.extract === null ? "" : `-e${g.extract.left}.${g.extract.top}.${g.extract.width}x${g.extract.height}`;
  const p = g.pad === null ? "" : `-p${g.pad.top}.${g.pad.right}.${g.pad.bottom}.${g.pad.left}`;
  return `${base}${e}${p}`;
}

/** fm=auto: AVIF, then WebP, when the client says it takes them; else PNG for sources with transparency, JPEG otherwise. */
function pickFormat(accept: string, sourceType: string): OutputFormat {
  if (/\bimage\/avif\b/i.test(accept)) return "avif";
  if (/\bimage\/webp\b/i.test(accept)) return "webp";
  return sourceType === "image/png" || sourceType === "image/gif" ? "png" : "jpeg";
}

/** The Accept headers fm=auto tells apart: each gives one of its formats. */
const ACCEPTS = ["image/avif", "image/webp", ""];

/**
 * The canonical names of the variants a set of queries (MEDIA_VARIANT_SET) gives for one item, each
 * with its spec: what MEDIA_VARIANTS=strict renders after an upload and serves, and nothing else.
 * An entry asking for something delivery would refuse throws (checked at start-up).
 */
export function variantSet(set: readonly string[], widths: readonly number[], source: Source): Map<string, VariantSpec> {
  const out = new Map<string, VariantSpec>();
  for (const entry of set)
    for (const accept of ACCEPTS) {
      const v = readVariant(new URLSearchParams(entry), accept, widths, source);
      if (v !== null) out.set(v.name, v.spec);
    }
  return out;
}

/** The version tag delivery URLs carry: the content hash, and the focal point crops depend on. */
export const versionTag = (hash: string, fx: number | null, fy: number | null): string =>
  fx === null || fy === null ? hash.slice(0, 16) : `${hash.slice(0, 16)}-${Math.round(fx * 1000)}-${Math.round(fy * 1000)}`;
