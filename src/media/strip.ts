// Metadata a raster upload's container carries beside its pixels, removed before the bytes are
// stored. EXIF and XMP go with the re-encode in image.ts (stripMetadata: the image turned upright,
// its colour profile kept); what sharp does not report, or a file without EXIF keeps, goes here,
// by walking the container: JPEG IPTC (APP13), comments (COM) and every APP segment but JFIF, the
// ICC profile and Adobe's colour transform, and anything after the end of the image; PNG text
// (tEXt, zTXt, iTXt), eXIf, tIME and every ancillary chunk that is not about rendering; GIF
// comments and application extensions but looping and the ICC profile; WebP EXIF, XMP and unknown
// chunks. Lossless: the coded pixels are copied as they are, so a file without metadata stays the
// same bytes (and lands on the same content hash).
import { AppError } from "../errors";
import { stripMetadata } from "./image";

/** The bytes to store for a raster upload: without the metadata its container carries. */
export async function withoutMetadata(bytes: Uint8Array, type: string, hasExif: boolean, maxPixels: number): Promise<Uint8Array> {
  let out = hasExif && type !== "image/gif" ? await stripMetadata(bytes, type, maxPixels) : bytes;
  let walked = stripContainer(out, type);
  // A container this walk cannot follow (sharp could read it) is re-encoded, which keeps no metadata.
  if (walked === null && type !== "image/gif") {
    out = await stripMetadata(out, type, maxPixels);
    walked = stripContainer(out, type);
  }
  if (walked === null) throw new AppError("unsupported_media_type", "the file could not be read as the image its bytes announce");
  return walked;
}

/** The container without its metadata; the bytes as they are for a type not walked (AVIF); null when it cannot be walked. */
function stripContainer(b: Uint8Array, type: string): Uint8Array | null {
  if (type === "image/jpeg") return stripJpeg(b);
  if (type === "image/png") return stripPng(b);
  if (type === "image/gif") return stripGif(b);
  if (type === "image/webp") return stripWebp(b);
  return b;
}

type Range = readonly [number, number];

function join(b: Uint8Array, ranges: readonly Range[], tail: readonly number[] = []): Uint8Array {
  const out = new Uint8Array(ranges.reduce((n, [s, e]) => n + e - s, 0) + tail.length);
  let at = 0;
  for (const [s, e] of ranges) {
    out.set(b.subarray(s, e), at);
    at += e - s;
  }
  out.set(tail, at);
  return out;
}

const startsWith = (b: Uint8Array, at: number, text: string): boolean => {
  for (let i = 0; i < text.length; i++) if (b[at + i] !== text.charCodeAt(i)) return false;
  return true;
};

/** APPn segments kept: JFIF, the ICC profile, Adobe's (it says how the colours were transformed). COM never. */
function keepJpegSegment(b: Uint8Array, marker: number, body: number): boolean {
  if (marker === 0xfe) return false;
  if (marker < 0xe0 || marker > 0xef) return true;
  if (marker === 0xe0) return startsWith(b, body, "JFIF\0");
  if (marker === 0xe2) return startsWith(b, body, "ICC_PROFILE\0");
  if (marker === 0xee) return startsWith(b, body, "Adobe");
  return false;
}

/** Past a scan's entropy-coded data: the next marker (0xFF then neither 0x00, a stuffed byte, nor a restart marker). */
function afterScan(b: Uint8Array, i: number): number {
  for (let at = b.indexOf(0xff, i); at >= 0 && at + 1 < b.length; at = b.indexOf(0xff, at + 1)) {
    const next = b[at + 1] ?? 0;
    if (next !== 0x00 && !(next >= 0xd0 && next <= 0xd7)) return at;
  }
  return -1;
}

function stripJpeg(b: Uint8Array): Uint8Array | null {
  if (b[0] !== 0xff || b[1] !== 0xd8) return null;
  const keep: Range[] = [[0, 2]];
  let i = 2;
  for (;;) {
    if (b[i] !== 0xff) return null;
    while (b[i + 1] === 0xff) i++; // fill bytes
    const marker = b[i + 1];
    if (marker === undefined) return null;
    // The end of the image: what follows (a second picture, an appended file) is not kept.
    if (marker === 0xd9) return join(b, [...keep, [i, i + 2]]);
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      keep.push([i, i + 2]);
      i += 2;
      continue;
    }
    const len = ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0);
    const end = i + 2 + len;
    if (len < 2 || end > b.length) return null;
    if (keepJpegSegment(b, marker, i + 4)) keep.push([i, end]);
    i = end;
    if (marker === 0xda) {
      const next = afterScan(b, i);
      if (next < 0) return null;
      keep.push([i, next]);
      i = next;
    }
  }
}

/** Ancillary PNG chunks that change how the image looks (colour, transparency, animation); every other one goes. */
const PNG_KEEP = new Set(["tRNS", "gAMA", "cHRM", "sRGB", "iCCP", "sBIT", "bKGD", "pHYs", "acTL", "fcTL", "fdAT", "cICP", "mDCv", "cLLi"]);

function stripPng(b: Uint8Array): Uint8Array | null {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const keep: Range[] = [[0, 8]];
  let i = 8;
  while (i + 12 <= b.length) {
    const len = view.getUint32(i);
    const end = i + 12 + len;
    if (end > b.length) return null;
    const name = String.fromCharCode(b[i + 4] ?? 0, b[i + 5] ?? 0, b[i + 6] ?? 0, b[i + 7] ?? 0);
    // A critical chunk (upper-case first letter) is the image itself.
    const critical = (b[i + 4] ?? 0) < 0x61;
    if (critical || PNG_KEEP.has(name)) keep.push([i, end]);
    if (name === "IEND") return join(b, keep);
    i = end;
  }
  return null;
}

/** Past a run of GIF data sub-blocks (each a length byte and that many bytes, a zero length ending the run). */
function afterSubBlocks(b: Uint8Array, i: number): number {
  for (;;) {
    const n = b[i];
    if (n === undefined) return -1;
    i += 1 + n;
    if (n === 0) return i;
  }
}

/** GIF application extensions kept: looping (Netscape's and its twin) and the ICC profile. */
const GIF_APPS = ["NETSCAPE2.0", "ANIMEXTS1.0", "ICCRGBG1012"];

function stripGif(b: Uint8Array): Uint8Array | null {
  if (b.length < 13) return null;
  const packed = b[10] ?? 0;
  let i = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
  const keep: Range[] = [[0, i]];
  while (i < b.length) {
    const start = i;
    const block = b[i];
    if (block === 0x3b) return join(b, [...keep, [i, i + 1]]);
    if (block === 0x2c) {
      const local = b[i + 9] ?? 0;
      i = afterSubBlocks(b, i + 10 + (local & 0x80 ? 3 * 2 ** ((local & 7) + 1) : 0) + 1);
      if (i < 0) return null;
      keep.push([start, i]);
    } else if (block === 0x21) {
      const label = b[i + 1];
      i = afterSubBlocks(b, i + 2);
      if (i < 0) return null;
      const app = label === 0xff && b[start + 2] === 11 && GIF_APPS.some((id) => startsWith(b, start + 3, id));
      if (label !== 0xfe && (label !== 0xff || app)) keep.push([start, i]);
    } else return null;
  }
  // Many GIFs end without their trailer; one is written.
  return i === b.length ? join(b, keep, [0x3b]) : null;
}

/** WebP chunks kept: the image, its alpha, animation and colour profile; EXIF, XMP and unknown chunks go. */
const WEBP_KEEP = new Set(["VP8 ", "VP8L", "VP8X", "ALPH", "ANIM", "ANMF", "ICCP"]);

function stripWebp(b: Uint8Array): Uint8Array | null {
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (b.length < 12) return null;
  const riffEnd = Math.min(b.length, 8 + view.getUint32(4, true));
  const keep: Range[] = [[0, 12]];
  let i = 12;
  let flagsAt = -1;
  let at = 12;
  while (i + 8 <= riffEnd) {
    const name = String.fromCharCode(b[i] ?? 0, b[i + 1] ?? 0, b[i + 2] ?? 0, b[i + 3] ?? 0);
    const len = view.getUint32(i + 4, true);
    const end = i + 8 + len + (len & 1);
    if (i + 8 + len > riffEnd) return null;
    if (WEBP_KEEP.has(name)) {
      if (name === "VP8X") flagsAt = at + 8;
      keep.push([i, Math.min(end, riffEnd)]);
      at += Math.min(end, riffEnd) - i;
    }
    i = end;
  }
  const out = join(b, keep);
  new DataView(out.buffer).setUint32(4, out.length - 8, true);
  // The extended header's flags no longer announce EXIF (0x08) or XMP (0x04).
  if (flagsAt >= 0) out[flagsAt] = (out[flagsAt] ?? 0) & ~0x0c;
  return out;
}
