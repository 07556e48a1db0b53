// The studio's built files (studio/dist: index.html and hashed assets), held in memory with their
// gzip form: a few hundred kilobytes, read once. The single binary carries them packed in one
// embedded file (pack.ts); everywhere else they are read from studio/dist, which `npm install`
// and `npm start` build (studio/build.mjs).
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { acceptsGzip } from "../lib/accept";
import { embeddedStudioPack, gzip } from "../platform/files";

export const PACK_NAME = "studio.pack";
/** Path inside studio/dist → the file's bytes, base64. */
export type Pack = Record<string, string>;

interface Asset {
  readonly bytes: Uint8Array<ArrayBuffer>;
  readonly gzipped: Uint8Array<ArrayBuffer> | null;
  readonly type: string;
}

const DIST = fileURLToPath(new URL("../../studio/dist/", import.meta.url));

const TYPES: Record<string, string> = {
  html: "text/html; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
  json: "application/json",
  map: "application/json",
};
const typeOf = (path: string): string => TYPES[path.slice(path.lastIndexOf(".") + 1)] ?? "application/octet-stream";
// Text compresses; images and fonts already are.
const COMPRESSIBLE = /\.(html|js|css|svg|json|map)$/;

/**
 * Everything the studio page may do: its own scripts and styles only (no inline script, no eval),
 * talk to this origin only, never be framed. Content an agent wrote is never inserted as HTML
 * outside the sanitising editor, and this policy stops a script if it were.
 */
const STUDIO_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

async function readDist(): Promise<Map<string, Uint8Array<ArrayBuffer>> | null> {
  const packed = await embeddedStudioPack();
  if (packed !== null) return new Map(Object.entries(JSON.parse(packed) as Pack).map(([p, b64]) => [p, Uint8Array.from(Buffer.from(b64, "base64"))]));
  const files = await readdir(DIST, { recursive: true, withFileTypes: true }).catch(() => null);
  if (!files) return null;
  const out = new Map<string, Uint8Array<ArrayBuffer>>();
  for (const f of files) {
    if (!f.isFile() || f.name.startsWith(".") || f.name === PACK_NAME) continue;
    const full = join(f.parentPath, f.name);
    const b = await readFile(full);
    out.set(relative(DIST, full).split("\\").join("/"), new Uint8Array(b.buffer, b.byteOffset, b.byteLength) as Uint8Array<ArrayBuffer>);
  }
  return out.has("index.html") ? out : null;
}

let loaded: Promise<Map<string, Asset> | null> | null = null;

/** The built studio, read once per process; null when it has not been built. */
function studioAssets(): Promise<Map<string, Asset> | null> {
  loaded ??= readDist().then((files) => {
    if (!files) {
      loaded = null; // built later (npm start builds first; a test run may build after starting): read again
      return null;
    }
    return new Map([...files].map(([path, bytes]) => [path, { bytes, gzipped: COMPRESSIBLE.test(path) ? gzip(bytes) : null, type: typeOf(path) }]));
  });
  return loaded;
}

const PAGE_HEADERS = {
  "content-security-policy": STUDIO_CSP,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cross-origin-opener-policy": "same-origin",
  // The page itself is small and names the hashed assets of this build: always revalidated.
  "cache-control": "no-cache",
};

const NOT_BUILT = "The studio has not been built. `npm start` builds it (node studio/build.mjs); the single binary carries it built.\n";

/**
 * GET /studio/… : a hashed asset (immutable; 404 when unknown, never the page), else index.html,
 * which answers every route of the app (deep links survive a reload).
 */
export async function studioFile(request: Request, path: string): Promise<Response> {
  const assets = await studioAssets();
  if (!assets) return new Response(NOT_BUILT, { status: 503, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  const isAsset = path.startsWith("assets/");
  const asset = assets.get(isAsset ? path : "index.html");
  if (!asset) return new Response("Not found\n", { status: 404, headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" } });
  const headers: Record<string, string> = isAsset
    ? { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff", "cross-origin-resource-policy": "same-origin" }
    : { ...PAGE_HEADERS };
  headers["content-type"] = asset.type;
  headers.vary = "accept-encoding";
  if (asset.gzipped && acceptsGzip(request)) return new Response(asset.gzipped, { headers: { ...headers, "content-encoding": "gzip" } });
  return new Response(asset.bytes, { headers });
}
