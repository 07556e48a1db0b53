// The type of an upload, read from its bytes: never from the file name or a header,
// so a renamed executable is refused whatever it claims to be.

const ascii = (b: Uint8Array, at: number, text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

/** The media type the bytes are, among those the library knows; null for anything else. */
export function sniffType(b: Uint8Array): string | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "image/jpeg";
  if (b.length >= 8 && ascii(b, 0, "\x89PNG\r\n\x1a\n")) return "image/png";
  if (b.length >= 6 && (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a"))) return "image/gif";
  if (b.length >= 12 && ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) return "image/webp";
  if (b.length >= 12 && ascii(b, 4, "ftyp") && (ascii(b, 8, "avif") || ascii(b, 8, "avis"))) return "image/avif";
  if (b.length >= 5 && ascii(b, 0, "%PDF-")) return "application/pdf";
  if (isSvg(b)) return "image/svg+xml";
  return null;
}

/**
 * SVG is text: UTF-8 (a BOM allowed), then an XML declaration, comments, a doctype and white space
 * in any order, then the root element `<svg`. Bytes that are not valid UTF-8 are not SVG.
 */
function isSvg(b: Uint8Array): boolean {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(b.subarray(0, 4096));
  } catch {
    // The first 4 KiB may end inside a character: retry on a shorter prefix.
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(b.subarray(0, 4090));
    } catch {
      return false;
    }
  }
  let s = text.replace(/^\uFEFF/, "");
  for (;;) {
    const before = s;
    s = s
      .replace(/^\s+/, "")
      .replace(/^<\?xml[^>]*\?>/, "")
      .replace(/^<!--[\s\S]*?-->/, "")
      .replace(/^<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/i, "");
    if (s === before) break;
  }
  return /^<svg[\s>]/.test(s);
}

/** The file name extension the type is served with. */
export const EXTENSION: Readonly<Record<string, string>> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/svg+xml": "svg",
  "application/pdf": "pdf",
};

/** Raster images sharp decodes and renders variants of (SVG and PDF are served as they are). */
export const isRaster = (type: string): boolean => type === "image/jpeg" || type === "image/png" || type === "image/gif" || type === "image/webp" || type === "image/avif";
