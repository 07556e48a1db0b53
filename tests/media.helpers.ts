// Images made for the media tests (sharp, the library the service uses), and a PNG whose header
// announces a decompression bomb.
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import type { TestHarness } from "./helpers";

/** A JPEG with EXIF carrying a GPS location. */
export async function jpegWithGps(width = 1200, height = 800): Promise<Uint8Array> {
  const img = sharp({ create: { width, height, channels: 3, background: { r: 200, g: 60, b: 30 } } })
    .withExif({ IFD0: { Copyright: "test" }, IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 24/1", GPSLongitudeRef: "E", GPSLongitude: "2/1 21/1 7/1" } })
    .jpeg({ quality: 80 });
  return new Uint8Array(await img.toBuffer());
}

/** A PNG whose left half is red and right half blue (focal-point crops tell which side they kept). */
export async function twoColourPng(width = 1280, height = 320): Promise<Uint8Array> {
  const half = Math.floor(width / 2);
  const left = await sharp({ create: { width: half, height, channels: 3, background: "#ff0000" } })
    .png()
    .toBuffer();
  const img = sharp({ create: { width, height, channels: 3, background: "#0000ff" } }).composite([{ input: left, left: 0, top: 0 }]);
  return new Uint8Array(await img.png().toBuffer());
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b: Uint8Array): number => {
  let c = 0xffffffff;
  for (const x of b) c = (CRC_TABLE[(c ^ x) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.length);
  const typed = new Uint8Array(4 + data.length);
  typed.set(new TextEncoder().encode(type), 0);
  typed.set(data, 4);
  out.set(typed, 4);
  v.setUint32(8 + data.length, crc32(typed));
  return out;
}

/** A small PNG file announcing width × height (a 1-bit grey image): decoding it would need gigabytes. */
export function pngBomb(width = 50_000, height = 50_000): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([1, 0, 0, 0, 0], 8); // bit depth 1, greyscale, deflate, adaptive filter, no interlace
  // A few rows of zeros: enough to look real; a decoder would go on to allocate the whole image.
  const idat = deflateSync(new Uint8Array((Math.ceil(width / 8) + 1) * 16));
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", new Uint8Array(idat)), chunk("IEND", new Uint8Array())];
  return concatBytes(...parts);
}

/** The parts one after another, in one array. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** POST /admin/p/{ref}/media as multipart/form-data. */
export async function uploadForm(h: TestHarness, ref: string, bytes: Uint8Array, filename: string, fields: Record<string, string> = {}, opts: { key?: string; type?: string } = {}) {
  const form = new FormData();
  form.set("file", new File([bytes as Uint8Array<ArrayBuffer>], filename, { type: opts.type ?? "application/octet-stream" }));
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  return h.request("POST", `/admin/p/${ref}/media`, { raw: form, key: opts.key });
}
