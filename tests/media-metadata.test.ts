// Metadata in stored originals (media.md, What comes in): IPTC, JPEG comments, PNG text chunks,
// GIF XMP and comments, WebP XMP and EXIF never reach the storage. Each fixture is built here with
// its metadata written into the container by hand, uploaded, and the original read back through
// delivery is walked and scanned.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import sharp from "sharp";
import { harness, seedProject, type TestHarness } from "./helpers";
import { concatBytes, uploadForm } from "./media.helpers";

const SECRET = "SECRET-METADATA";
const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
const cat = concatBytes;
const be16 = (n: number): Uint8Array => new Uint8Array([n >> 8, n & 0xff]);
const be32 = (n: number): Uint8Array => new Uint8Array([n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const le32 = (n: number): Uint8Array => new Uint8Array([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, n >>> 24]);

/** A JPEG segment: marker, length, body. */
const segment = (marker: number, body: Uint8Array): Uint8Array => cat(new Uint8Array([0xff, marker]), be16(body.length + 2), body);

/** Photoshop's APP13 with an IPTC record (2:80, the by-line). */
function iptcApp13(text: string): Uint8Array {
  const record = cat(new Uint8Array([0x1c, 2, 80]), be16(text.length), enc(text));
  const resource = cat(enc("8BIM"), be16(0x0404), new Uint8Array([0, 0]), be32(record.length), record, record.length % 2 ? new Uint8Array([0]) : new Uint8Array());
  return segment(0xed, cat(enc("Photoshop 3.0\0"), resource));
}

/** The markers of a JPEG's segments up to its first scan. */
function jpegMarkers(b: Uint8Array): number[] {
  const out: number[] = [];
  let i = 2;
  while (i + 4 <= b.length && b[i] === 0xff) {
    const m = b[i + 1] ?? 0;
    out.push(m);
    if (m === 0xda) break;
    i += 2 + (((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0));
  }
  return out;
}

function pngChunk(type: string, data: Uint8Array): Uint8Array {
  const typed = cat(enc(type), data);
  return cat(be32(data.length), typed, be32(Bun.hash.crc32(typed)));
}

function pngChunkNames(b: Uint8Array): string[] {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const out: string[] = [];
  for (let i = 8; i + 12 <= b.length; i += 12 + v.getUint32(i)) out.push(new TextDecoder().decode(b.subarray(i + 4, i + 8)));
  return out;
}

/** GIF sub-blocks of at most 255 bytes, then the zero-length terminator. */
function subBlocks(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < data.length; i += 255) {
    const piece = data.subarray(i, i + 255);
    parts.push(new Uint8Array([piece.length]), piece);
  }
  return cat(...parts, new Uint8Array([0]));
}

/** XMP in a GIF as Adobe writes it: the raw packet, then the 258-byte "magic trailer" that ends the sub-blocks. */
function gifXmp(xmp: string): Uint8Array {
  const trailer = new Uint8Array(258);
  trailer[0] = 1;
  for (let k = 0; k < 256; k++) trailer[1 + k] = 255 - k;
  trailer[257] = 0;
  return cat(new Uint8Array([0x21, 0xff, 11]), enc("XMP DataXMP"), enc(xmp), trailer);
}

const xmpPacket = `<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><rdf:Description xmlns:dc="http://purl.org/dc/elements/1.1/" dc:creator="${SECRET}-xmp"/></rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;

const solid = (channels: 3 | 4 = 3) => sharp({ create: { width: 40, height: 30, channels, background: { r: 20, g: 120, b: 200, alpha: 1 } } });

describe("metadata in stored originals", () => {
  let h: TestHarness;
  let ref: string;

  beforeAll(async () => {
    h = await harness({ DATA_DIR: mkdtempSync(join(tmpdir(), "media-meta-")) });
    ref = (await seedProject(h)).slug;
  });

  /** Uploads the bytes and answers the stored original, as delivery serves it. */
  const storedOriginal = async (bytes: Uint8Array, name: string): Promise<Uint8Array> => {
    const up = await uploadForm(h, ref, bytes, name);
    expect(up.status).toBe(201);
    const res = await h.app.handle(new Request(up.json.data.url));
    expect(res.status).toBe(200);
    const stored = new Uint8Array(await res.arrayBuffer());
    expect(stored.length).toBe(up.json.data.size);
    const meta = await sharp(stored).metadata();
    expect({ width: meta.width, height: meta.height }).toEqual({ width: 40, height: meta.pages && meta.pages > 1 ? meta.height : 30 });
    return stored;
  };
  const text = (b: Uint8Array): string => new TextDecoder("latin1").decode(b);

  test("JPEG: IPTC (APP13) and comments (COM) go; the ICC profile stays", async () => {
    const base = new Uint8Array(await solid().jpeg().withIccProfile("srgb").toBuffer());
    expect((await sharp(base).metadata()).icc).toBeDefined();
    const bytes = cat(base.subarray(0, 2), iptcApp13(`${SECRET}-iptc`), segment(0xfe, enc(`${SECRET}-comment`)), base.subarray(2));
    expect(jpegMarkers(bytes)).toContain(0xed);
    expect(jpegMarkers(bytes)).toContain(0xfe);
    const stored = await storedOriginal(bytes, "iptc.jpg");
    expect(text(stored)).not.toContain(SECRET);
    expect(jpegMarkers(stored).filter((m) => m === 0xed || m === 0xfe)).toEqual([]);
    expect((await sharp(stored).metadata()).icc).toBeDefined();
    // Only the metadata went: the coded image is the same bytes.
    expect(stored).toEqual(base);
  });

  test("JPEG with EXIF and a comment: both go (the EXIF path re-encodes, the comment does not come back)", async () => {
    const base = new Uint8Array(
      await solid()
        .jpeg()
        .withExif({ IFD0: { Copyright: `${SECRET}-exif` } })
        .toBuffer(),
    );
    const bytes = cat(base.subarray(0, 2), segment(0xfe, enc(`${SECRET}-comment`)), base.subarray(2));
    const stored = await storedOriginal(bytes, "exif.jpg");
    expect(text(stored)).not.toContain(SECRET);
    expect(jpegMarkers(stored).filter((m) => m === 0xe1 || m === 0xfe)).toEqual([]);
  });

  test("PNG: tEXt, zTXt and iTXt chunks go", async () => {
    const base = new Uint8Array(await solid(4).png().toBuffer());
    const idat = pngChunkNames(base).indexOf("IDAT");
    expect(idat).toBeGreaterThan(0);
    const chunks = [
      pngChunk("tEXt", enc(`Author\0${SECRET}-text`)),
      pngChunk("zTXt", cat(enc("Comment\0\0"), new Uint8Array(deflateSync(enc(`${SECRET}-ztxt`))))),
      pngChunk("iTXt", enc(`Description\0\0\0en\0\0${SECRET}-itxt`)),
    ];
    const ihdrEnd = 8 + 25;
    const bytes = cat(base.subarray(0, ihdrEnd), ...chunks, base.subarray(ihdrEnd));
    expect(pngChunkNames(bytes)).toEqual(expect.arrayContaining(["tEXt", "zTXt", "iTXt"]));
    const stored = await storedOriginal(bytes, "text.png");
    expect(pngChunkNames(stored).filter((n) => ["tEXt", "zTXt", "iTXt", "eXIf", "tIME"].includes(n))).toEqual([]);
    expect(text(stored)).not.toContain(SECRET);
    expect(stored).toEqual(base);
  });

  test("GIF: XMP (an application extension) and comments go; the looping extension stays", async () => {
    const base = new Uint8Array(await solid().gif({ loop: 0 }).toBuffer());
    expect(text(base)).toContain("NETSCAPE2.0");
    // After the header, the logical screen descriptor and its colour table: the extensions.
    const packed = base[10] ?? 0;
    const at = 13 + (packed & 0x80 ? 3 * 2 ** ((packed & 7) + 1) : 0);
    const bytes = cat(base.subarray(0, at), gifXmp(xmpPacket), new Uint8Array([0x21, 0xfe]), subBlocks(enc(`${SECRET}-gif-comment`)), base.subarray(at));
    expect((await sharp(bytes).metadata()).width).toBe(40);
    const stored = await storedOriginal(bytes, "anim.gif");
    expect(text(stored)).not.toContain(SECRET);
    expect(text(stored)).not.toContain("XMP DataXMP");
    expect(text(stored)).toContain("NETSCAPE2.0");
    expect(stored).toEqual(base);
  });

  test("WebP: XMP and EXIF chunks go", async () => {
    const bytes = new Uint8Array(
      await solid()
        .webp({ lossless: true })
        .withExif({ IFD0: { Copyright: `${SECRET}-exif` } })
        .withXmp(xmpPacket)
        .toBuffer(),
    );
    expect(text(bytes)).toContain("XMP ");
    const stored = await storedOriginal(bytes, "meta.webp");
    expect(text(stored)).not.toContain(SECRET);
    expect(text(stored)).not.toContain("XMP ");
    expect(text(stored)).not.toContain("EXIF");
    expect(le32(stored.length - 8)).toEqual(stored.subarray(4, 8));
  });
});
