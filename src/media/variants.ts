// Which variant a delivery request asks for: widths and heights from MEDIA_WIDTHS only,
// a few qualities, three fits, four formats (auto: from Accept, answered with Vary: Accept), so the
// variants anyone can make the service render are bounded (widths² × fits × formats × qualities).
import { AppError } from "../errors";
import type { Fit, OutputFormat, VariantSpec } from "./image";

const QUALITIES = [40, 50, 60, 70, 75, 80, 90, 100] as const;
const FITS: readonly Fit[] = ["cover", "contain", "inside"];
const FORMATS = ["webp", "avif", "jpeg", "png", "auto"] as const;

export interface VariantRequest {
  readonly spec: VariantSpec;
  /** The stored variant's name, e.g. `w800-h0-inside-q75.webp`. */
  readonly name: string;
  /** The format came from Accept: the answer varies by it. */
  readonly negotiated: boolean;
}

const bad = (field: string, message: string): AppError => new AppError("invalid_request", message, { field });

/** null: the original is asked for (no w, h or fm). */
export function readVariant(query: URLSearchParams, accept: string, widths: readonly number[], sourceType: string, focal: { x: number; y: number } | null): VariantRequest | null {
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
  if (fitRaw !== null && !FITS.includes(fitRaw as Fit)) throw bad("fit", `fit must be one of ${FITS.join(", ")}`);
  const fit: Fit = (fitRaw as Fit | null) ?? (w !== null && h !== null ? "cover" : "inside");
  if (fm !== null && fm !== "" && !(FORMATS as readonly string[]).includes(fm)) throw bad("fm", `fm must be one of ${FORMATS.join(", ")}`);
  const qRaw = query.get("q");
  const q = qRaw === null || qRaw === "" ? 75 : Number(qRaw);
  if (!(QUALITIES as readonly number[]).includes(q)) throw bad("q", `q must be one of ${QUALITIES.join(", ")}`);
  const negotiated = fm === null || fm === "" || fm === "auto";
  const format: OutputFormat = negotiated ? pickFormat(accept, sourceType) : (fm as OutputFormat);
  const crop = fit === "cover" && w !== null && h !== null;
  const f = crop ? (focal ?? { x: 0.5, y: 0.5 }) : { x: 0.5, y: 0.5 };
  const focalPart = crop ? `-c${Math.round(f.x * 1000)}x${Math.round(f.y * 1000)}` : "";
  return { spec: { width: w, height: h, fit, format, quality: q, focal: f }, name: `w${w ?? 0}-h${h ?? 0}-${fit}-q${q}${focalPart}.${format}`, negotiated };
}

/** fm=auto: AVIF, then WebP, when the client says it takes them; else PNG for sources with transparency, JPEG otherwise. */
function pickFormat(accept: string, sourceType: string): OutputFormat {
  if (/\bimage\/avif\b/i.test(accept)) return "avif";
  if (/\bimage\/webp\b/i.test(accept)) return "webp";
  return sourceType === "image/png" || sourceType === "image/gif" ? "png" : "jpeg";
}

/** The version tag delivery URLs carry: the content hash, and the focal point crops depend on. */
export const versionTag = (hash: string, fx: number | null, fy: number | null): string =>
  fx === null || fy === null ? hash.slice(0, 16) : `${hash.slice(0, 16)}-${Math.round(fx * 1000)}-${Math.round(fy * 1000)}`;
